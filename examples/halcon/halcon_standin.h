/* A stand-in for the few HALCON/C declarations the segrt glue uses, so the glue compiles and runs on a
 * machine without HALCON (MVTec's headers and library are not redistributable).
 *
 * Names and parameter lists follow HALCON/C (HalconC.h, HALCON 11 and later, where pixel pointers travel
 * as Hlong) and the Extension Package Interface (HSetErrText); operator success is H_MSG_TRUE (2).
 * The behaviour is a toy with the properties the glue relies on:
 *   - images of the types "byte" (1 byte a pixel), "uint2", "int2" (2 bytes, native order) and "real", "int4"
 *     (4 bytes) are planar: one tightly packed plane per channel (row stride = width * pixel size),
 *     get_image_pointer3 gives the R, G, B planes, get_image_pointer1 the first plane, both with the type;
 *     (HALCON also records the used bits of a uint2/int2 image; the stand-in does not model them);
 *   - regions (threshold on a byte image) keep their pixels, so region_to_bin draws them back;
 *   - gen_image1 / gen_image3 copy the pixels (the caller may free its buffer right after);
 *   - get_image_pointer3 on a 1-channel image fails, as in HALCON;
 *   - HSetErrText sets the text the next get_error_text returns for a code > 10000, once;
 *   - tuples (Htuple) of doubles as HALCON/C's tuple mode uses them (create_tuple, set_d, get_d,
 *     length_tuple, destroy_tuple), and XLD contours made by T_gen_contour_polygon_xld from a Row and a
 *     Column tuple, read back by T_get_contour_xld (new tuples, destroyed by the caller).
 * Error codes other than H_MSG_TRUE are the stand-in's own (H_STANDIN_ERR_*), not HALCON's values.
 * Objects are plain heap structs released with clear_obj; one object per Hobject (no tuples). */
#ifndef HALCON_STANDIN_H
#define HALCON_STANDIN_H

#if defined(_WIN64)
typedef long long Hlong;   /* HALCON: __int64 on 64-bit Windows, where long has 32 bits */
#else
typedef long Hlong;
#endif
typedef unsigned int Herror;
typedef struct HStandinObject *Hobject;   /* HALCON: an opaque key (Hkey) */
typedef struct HStandinTuple *Htuple;     /* HALCON: a struct of typed elements; here doubles only */

#define H_MSG_TRUE 2
#define MAX_STRING 1024                 /* size of HALCON/C string output buffers */
#define H_STANDIN_ERR_BAD_CALL 9001     /* wrong object kind, wrong channel count, NULL argument */
#define H_STANDIN_ERR_NO_MEMORY 9002

Herror gen_image1(Hobject *Image, const char *Type, Hlong Width, Hlong Height, Hlong PixelPointer);
Herror gen_image3(Hobject *ImageRGB, const char *Type, Hlong Width, Hlong Height,
                  Hlong PixelPointerRed, Hlong PixelPointerGreen, Hlong PixelPointerBlue);
Herror gen_image_const(Hobject *Image, const char *Type, Hlong Width, Hlong Height);
Herror count_channels(const Hobject MultiChannelImage, Hlong *Channels);
Herror get_image_pointer1(const Hobject Image, Hlong *Pointer, char *Type, Hlong *Width, Hlong *Height);
Herror get_image_pointer3(const Hobject ImageRGB, Hlong *PointerRed, Hlong *PointerGreen,
                          Hlong *PointerBlue, char *Type, Hlong *Width, Hlong *Height);
Herror threshold(const Hobject Image, Hobject *Region, double MinGray, double MaxGray);
Herror region_to_bin(const Hobject Region, Hobject *BinImage, Hlong ForegroundGray, Hlong BackgroundGray, Hlong Width, Hlong Height);
Herror area_center(const Hobject Regions, Hlong *Area, double *Row, double *Column);
Herror clear_obj(Hobject Objects);
void create_tuple(Htuple *Tuple, Hlong Length);
void set_d(Htuple Tuple, double Value, Hlong Index);
double get_d(const Htuple Tuple, Hlong Index);
Hlong length_tuple(const Htuple Tuple);
void destroy_tuple(Htuple Tuple);
Herror T_gen_contour_polygon_xld(Hobject *Contour, const Htuple Row, const Htuple Col);
Herror T_get_contour_xld(const Hobject Contour, Htuple *Row, Htuple *Col);
Herror get_error_text(Hlong ErrorCode, char *ErrorMessage);
Herror HSetErrText(char *text);

#endif /* HALCON_STANDIN_H */
