/* Helpers the glue's source files share (segrt_halcon.c defines them); not part of the glue's API. */
#ifndef SEGRT_HALCON_INTERNAL_H
#define SEGRT_HALCON_INTERNAL_H

#include "segrt_halcon.h"

/* Hands segrt's message for the calling thread's last failure to HALCON and returns the matching code. */
Herror segrt_halcon_status_error(SegStatus status);
/* A failure found by the glue itself (no segrt call made): same code range, the glue's own text. */
Herror segrt_halcon_glue_error(SegStatus status, const char *text);
/* Pixel pointers of a byte, uint2, int2 or real image of 1 or 3 channels, as segrt reads them. */
Herror segrt_halcon_image_view(Hobject image, SegImage *img, Hlong *out_width, Hlong *out_height);
/* A 0/255 byte buffer as a HALCON byte image and/or its foreground region (each output only when asked for). */
Herror segrt_halcon_mask_outputs(const unsigned char *buf, Hlong width, Hlong height, Hobject *mask_image, Hobject *region);

#endif /* SEGRT_HALCON_INTERNAL_H */
