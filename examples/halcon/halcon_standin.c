/* The stand-in's toy implementation (see halcon_standin.h): just enough HALCON/C behaviour to run the glue. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "halcon_standin.h"

enum { KIND_IMAGE = 1, KIND_REGION = 2, KIND_XLD = 3 };

struct HStandinObject {
    int kind;
    char type[16];            /* "byte", "real", ... */
    Hlong width, height;
    int channels;
    unsigned char *planes[3]; /* one tightly packed plane per channel (width * height * pixel size bytes) */
    Hlong area;               /* regions: the pixel count and centre of gravity */
    double row, col;
    Hlong points;             /* XLD contours: the points' rows and columns */
    double *rows, *cols;
};

struct HStandinTuple {
    Hlong length;
    double *values;
};

static char err_text[MAX_STRING];
static int err_text_set = 0;

static size_t pixel_size(const char *type) {
    if (strcmp(type, "byte") == 0) return 1;
    if (strcmp(type, "uint2") == 0 || strcmp(type, "int2") == 0) return 2;
    if (strcmp(type, "real") == 0 || strcmp(type, "int4") == 0) return 4;
    return 0;
}

static Herror new_image(Hobject *out, const char *type, Hlong w, Hlong h, int channels, const Hlong *pixels) {
    size_t psize = type ? pixel_size(type) : 0, plane;
    struct HStandinObject *o;
    int c;
    if (!out || psize == 0 || w <= 0 || h <= 0) return H_STANDIN_ERR_BAD_CALL;
    plane = (size_t)w * (size_t)h * psize;
    o = calloc(1, sizeof *o);
    if (!o) return H_STANDIN_ERR_NO_MEMORY;
    o->kind = KIND_IMAGE;
    strcpy(o->type, type);
    o->width = w;
    o->height = h;
    o->channels = channels;
    for (c = 0; c < channels; c++) {
        o->planes[c] = calloc(plane, 1);
        if (!o->planes[c]) { clear_obj(o); return H_STANDIN_ERR_NO_MEMORY; }
        if (pixels) memcpy(o->planes[c], (const void *)pixels[c], plane);   /* HALCON copies too */
    }
    *out = o;
    return H_MSG_TRUE;
}

Herror gen_image1(Hobject *Image, const char *Type, Hlong Width, Hlong Height, Hlong PixelPointer) {
    if (!PixelPointer) return H_STANDIN_ERR_BAD_CALL;
    return new_image(Image, Type, Width, Height, 1, &PixelPointer);
}

Herror gen_image3(Hobject *ImageRGB, const char *Type, Hlong Width, Hlong Height,
                  Hlong PixelPointerRed, Hlong PixelPointerGreen, Hlong PixelPointerBlue) {
    Hlong p[3];
    p[0] = PixelPointerRed; p[1] = PixelPointerGreen; p[2] = PixelPointerBlue;
    if (!p[0] || !p[1] || !p[2]) return H_STANDIN_ERR_BAD_CALL;
    return new_image(ImageRGB, Type, Width, Height, 3, p);
}

Herror gen_image_const(Hobject *Image, const char *Type, Hlong Width, Hlong Height) {
    return new_image(Image, Type, Width, Height, 1, NULL);
}

Herror count_channels(const Hobject MultiChannelImage, Hlong *Channels) {
    if (!MultiChannelImage || MultiChannelImage->kind != KIND_IMAGE || !Channels) return H_STANDIN_ERR_BAD_CALL;
    *Channels = MultiChannelImage->channels;
    return H_MSG_TRUE;
}

Herror get_image_pointer1(const Hobject Image, Hlong *Pointer, char *Type, Hlong *Width, Hlong *Height) {
    if (!Image || Image->kind != KIND_IMAGE || !Pointer || !Type || !Width || !Height) return H_STANDIN_ERR_BAD_CALL;
    *Pointer = (Hlong)Image->planes[0];
    strcpy(Type, Image->type);
    *Width = Image->width;
    *Height = Image->height;
    return H_MSG_TRUE;
}

Herror get_image_pointer3(const Hobject ImageRGB, Hlong *PointerRed, Hlong *PointerGreen,
                          Hlong *PointerBlue, char *Type, Hlong *Width, Hlong *Height) {
    if (!ImageRGB || ImageRGB->kind != KIND_IMAGE || ImageRGB->channels != 3) return H_STANDIN_ERR_BAD_CALL;
    if (!PointerRed || !PointerGreen || !PointerBlue || !Type || !Width || !Height) return H_STANDIN_ERR_BAD_CALL;
    *PointerRed = (Hlong)ImageRGB->planes[0];
    *PointerGreen = (Hlong)ImageRGB->planes[1];
    *PointerBlue = (Hlong)ImageRGB->planes[2];
    strcpy(Type, ImageRGB->type);
    *Width = ImageRGB->width;
    *Height = ImageRGB->height;
    return H_MSG_TRUE;
}

/* Byte images only: the region of pixels with MinGray <= value <= MaxGray. */
Herror threshold(const Hobject Image, Hobject *Region, double MinGray, double MaxGray) {
    struct HStandinObject *o;
    size_t n, i;
    double rows = 0, cols = 0;
    if (!Image || Image->kind != KIND_IMAGE || strcmp(Image->type, "byte") != 0 || !Region) return H_STANDIN_ERR_BAD_CALL;
    o = calloc(1, sizeof *o);
    if (!o) return H_STANDIN_ERR_NO_MEMORY;
    o->kind = KIND_REGION;
    o->width = Image->width;
    o->height = Image->height;
    n = (size_t)Image->width * (size_t)Image->height;
    o->planes[0] = calloc(n, 1);   /* the region's pixels, 1 = in it (for region_to_bin) */
    if (!o->planes[0]) { clear_obj(o); return H_STANDIN_ERR_NO_MEMORY; }
    for (i = 0; i < n; i++) {
        unsigned char v = Image->planes[0][i];
        if (v >= MinGray && v <= MaxGray) {
            o->planes[0][i] = 1;
            o->area++;
            rows += (double)(i / (size_t)Image->width);
            cols += (double)(i % (size_t)Image->width);
        }
    }
    o->row = o->area ? rows / (double)o->area : 0.0;
    o->col = o->area ? cols / (double)o->area : 0.0;
    *Region = o;
    return H_MSG_TRUE;
}

/* A Width x Height byte image: ForegroundGray in the region, BackgroundGray elsewhere (the part of the
 * region outside the image is dropped). */
Herror region_to_bin(const Hobject Region, Hobject *BinImage, Hlong ForegroundGray, Hlong BackgroundGray, Hlong Width, Hlong Height) {
    Hobject o = NULL;
    Hlong x, y;
    Herror err;
    if (!Region || Region->kind != KIND_REGION || !BinImage) return H_STANDIN_ERR_BAD_CALL;
    err = gen_image_const(&o, "byte", Width, Height);
    if (err != H_MSG_TRUE) return err;
    for (y = 0; y < Height; y++)
        for (x = 0; x < Width; x++) {
            int in = x < Region->width && y < Region->height && Region->planes[0][y * Region->width + x];
            o->planes[0][y * Width + x] = (unsigned char)(in ? ForegroundGray : BackgroundGray);
        }
    *BinImage = o;
    return H_MSG_TRUE;
}

Herror area_center(const Hobject Regions, Hlong *Area, double *Row, double *Column) {
    if (!Regions || Regions->kind != KIND_REGION || !Area || !Row || !Column) return H_STANDIN_ERR_BAD_CALL;
    *Area = Regions->area;
    *Row = Regions->row;
    *Column = Regions->col;
    return H_MSG_TRUE;
}

Herror clear_obj(Hobject Objects) {
    int c;
    if (!Objects) return H_MSG_TRUE;
    for (c = 0; c < 3; c++) free(Objects->planes[c]);
    free(Objects->rows);
    free(Objects->cols);
    free(Objects);
    return H_MSG_TRUE;
}

/* As documented for extension packages: a text set with HSetErrText is returned once, by the next call. */
Herror get_error_text(Hlong ErrorCode, char *ErrorMessage) {
    if (!ErrorMessage) return H_STANDIN_ERR_BAD_CALL;
    if (ErrorCode > 10000 && err_text_set) {
        strcpy(ErrorMessage, err_text);
        err_text_set = 0;
    } else {
        snprintf(ErrorMessage, MAX_STRING, "No error message available for this error code (%ld)", (long)ErrorCode);
    }
    return H_MSG_TRUE;
}

Herror HSetErrText(char *text) {
    if (!text) return H_STANDIN_ERR_BAD_CALL;
    snprintf(err_text, sizeof err_text, "%s", text);
    err_text_set = 1;
    return H_MSG_TRUE;
}

void create_tuple(Htuple *Tuple, Hlong Length) {
    struct HStandinTuple *t = calloc(1, sizeof *t);
    if (t && Length > 0) t->values = calloc((size_t)Length, sizeof(double));
    if (t) t->length = t->values || Length == 0 ? Length : 0;
    *Tuple = t;
}
void set_d(Htuple Tuple, double Value, Hlong Index) {
    if (Tuple && Index >= 0 && Index < Tuple->length) Tuple->values[Index] = Value;
}
double get_d(const Htuple Tuple, Hlong Index) {
    return Tuple && Index >= 0 && Index < Tuple->length ? Tuple->values[Index] : 0.0;
}
Hlong length_tuple(const Htuple Tuple) { return Tuple ? Tuple->length : 0; }
void destroy_tuple(Htuple Tuple) {
    if (!Tuple) return;
    free(Tuple->values);
    free(Tuple);
}
/* A polygon contour through the points (Row[i], Col[i]); the tuples are copied. */
Herror T_gen_contour_polygon_xld(Hobject *Contour, const Htuple Row, const Htuple Col) {
    struct HStandinObject *o;
    Hlong n;
    if (!Contour || !Row || !Col || Row->length != Col->length) return H_STANDIN_ERR_BAD_CALL;
    n = Row->length;
    o = calloc(1, sizeof *o);
    if (!o) return H_STANDIN_ERR_NO_MEMORY;
    o->kind = KIND_XLD;
    o->points = n;
    o->rows = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    o->cols = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    if (!o->rows || !o->cols) { clear_obj(o); return H_STANDIN_ERR_NO_MEMORY; }
    if (n > 0) {
        memcpy(o->rows, Row->values, (size_t)n * sizeof(double));
        memcpy(o->cols, Col->values, (size_t)n * sizeof(double));
    }
    *Contour = o;
    return H_MSG_TRUE;
}
Herror T_get_contour_xld(const Hobject Contour, Htuple *Row, Htuple *Col) {
    Hlong i;
    if (!Contour || Contour->kind != KIND_XLD || !Row || !Col) return H_STANDIN_ERR_BAD_CALL;
    create_tuple(Row, Contour->points);
    create_tuple(Col, Contour->points);
    for (i = 0; i < Contour->points; i++) {
        set_d(*Row, Contour->rows[i], i);
        set_d(*Col, Contour->cols[i], i);
    }
    return H_MSG_TRUE;
}
