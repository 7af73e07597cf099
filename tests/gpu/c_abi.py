"""One seg_create of the demo UNet on a GPU provider through the C ABI, as a host makes it: prints the
status (its SegStatus name), seg_last_error's text or, when a session was made, its session info's
"provider" member, and the log callback's lines (the fallback warning, the GPU libraries preloaded).

Usage: c_abi.py LIB ORT MODEL cuda|tensorrt require|fallback [FIELD=INT ...]
(FIELD: a SegOptions field of ABI 1.0's layout set to an integer, e.g. tile_mode=1)
"""
import ctypes as C
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "real"))
from segrt_c import Segrt  # noqa: E402

STATUS = {0: "SEG_OK", 12: "SEG_MODEL_INVALID", 30: "SEG_PROVIDER_UNAVAILABLE"}
PROVIDERS = {"cuda": 1, "tensorrt": 2}
POLICIES = {"require": 0, "fallback": 1}
LEVELS = {1: "error", 2: "warn", 3: "info"}

lib, ort, model, provider, policy = sys.argv[1:6]
log = []
callback_type = C.CFUNCTYPE(None, C.c_int32, C.c_char_p, C.c_void_p)
callback = callback_type(lambda level, message, _: log.append(f"{LEVELS.get(level, level)}: {message.decode(errors='replace')}"))

segrt = Segrt(pathlib.Path(lib), pathlib.Path(ort))
L = segrt.lib
L.seg_set_log_callback.argtypes = [callback_type, C.c_void_p]
L.seg_session_info.argtypes = [C.c_void_p, C.c_char_p, C.c_size_t, C.POINTER(C.c_size_t)]
L.seg_set_log_callback(callback, None)

fields = dict((k, int(v)) for k, v in (a.split("=", 1) for a in sys.argv[6:]))
options = segrt.options(provider=PROVIDERS[provider], provider_policy=POLICIES[policy], **fields)
handle = C.c_void_p()
status = L.seg_create(model.encode(), C.byref(options), C.byref(handle))
print(f"status: {STATUS.get(status, status)}")
if status != 0:
    buf = C.create_string_buffer(8192)
    L.seg_last_error(buf, len(buf))
    print(f"seg_last_error: {buf.value.decode(errors='replace')}")
else:
    needed = C.c_size_t()
    L.seg_session_info(handle, None, 0, C.byref(needed))
    buf = C.create_string_buffer(needed.value)
    L.seg_session_info(handle, buf, len(buf), C.byref(needed))
    info = json.loads(buf.value.decode())
    print(f"session info provider: {json.dumps(info['provider'])}")
    L.seg_free(handle)
for line in log:
    print(f"log {line}")
L.seg_set_log_callback(callback_type(), None)
