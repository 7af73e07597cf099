import onnxruntime as ort, numpy as np, sys
from PIL import Image
img = np.array(Image.open("models/sam2/reference/img0.png").convert("RGB").resize((256, 256), Image.BILINEAR), dtype=np.float32) / 255.0
x = ((img - [0.485, 0.456, 0.406]) / [0.229, 0.224, 0.225]).transpose(2, 0, 1)[None].astype(np.float32)
for conv in ["samexporter", "sam2onnx", "osam"]:
    bad_sessions = bad_runs = 0
    for s in range(8):
        so = ort.SessionOptions(); so.intra_op_num_threads = int(sys.argv[1])
        enc = ort.InferenceSession(f"models/sam2/sam2_tiny_{conv}_encoder.onnx", so, providers=["CPUExecutionProvider"])
        i = enc.get_inputs()[0]
        xi = (img * 255).astype(np.uint8).transpose(2,0,1)[None] if i.type == "tensor(uint8)" else x
        nan = [sum(int(np.isnan(o).sum()) for o in enc.run(None, {i.name: xi})) for _ in range(3)]
        bad_runs += sum(n > 0 for n in nan); bad_sessions += any(nan)
    print(f"ORT {ort.__version__} {conv}: sessions with NaN {bad_sessions}/8, runs with NaN {bad_runs}/24")
