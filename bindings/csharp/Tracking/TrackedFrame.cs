using System;
using System.Collections.Generic;
using System.Drawing;
using System.Drawing.Imaging;

namespace Segrt
{
    /// <summary>Every object of one frame: records, masks (0/255, Width x Height each) and the call's times (<see cref="TrackTimings"/>).</summary>
    public sealed class TrackedFrame : TrackTimings
    {
        /// <summary>The frame's index (0-based, in the order frames were added).</summary>
        public long Frame { get; internal set; }

        /// <summary>Frame and mask width in pixels.</summary>
        public int Width { get; internal set; }

        /// <summary>Frame and mask height in pixels.</summary>
        public int Height { get; internal set; }

        /// <summary>One record per object, in the order the objects were first prompted.</summary>
        public IList<TrackedObject> Objects { get; internal set; }

        /// <summary>One row-major Width x Height mask (0 or 255) per object, in the order of <see cref="Objects"/>.</summary>
        public IList<byte[]> Masks { get; internal set; }

        /// <summary>The mask of object <paramref name="objectId"/>; null when the frame has no such object.</summary>
        /// <param name="objectId">An id given when prompting.</param>
        /// <returns>The object's mask, or null.</returns>
        public byte[] MaskOf(int objectId)
        {
            for (int i = 0; i < Objects.Count; i++)
                if (Objects[i].ObjectId == objectId) return Masks[i];
            return null;
        }

        /// <summary>The record of object <paramref name="objectId"/>; null when the frame has no such object.</summary>
        /// <param name="objectId">An id given when prompting.</param>
        /// <returns>The object's record, or null.</returns>
        public TrackedObject? ObjectOf(int objectId)
        {
            for (int i = 0; i < Objects.Count; i++)
                if (Objects[i].ObjectId == objectId) return Objects[i];
            return null;
        }

        /// <summary>
        /// The frame with each present object blended in its own colour (<see cref="EverythingResult.ColorOf"/>
        /// of its id, half and half); the caller disposes it.
        /// </summary>
        /// <param name="image">The frame tracked (same size).</param>
        /// <returns>A new 24bpp Bitmap.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="image"/> is null.</exception>
        /// <exception cref="ArgumentException"><paramref name="image"/> is not the frame's size.</exception>
        public unsafe Bitmap ToOverlay(Bitmap image)
        {
            if (image == null) throw new ArgumentNullException(nameof(image));
            if (image.Width != Width || image.Height != Height) throw new ArgumentException("the image is not the tracked frame's size", nameof(image));
            var bmp = new Bitmap(Width, Height, PixelFormat.Format24bppRgb);
            using (var g = Graphics.FromImage(bmp))
                g.DrawImage(image, 0, 0, Width, Height);
            var data = bmp.LockBits(new Rectangle(0, 0, Width, Height), ImageLockMode.ReadWrite, PixelFormat.Format24bppRgb);
            try
            {
                for (int k = 0; k < Masks.Count; k++)
                {
                    if (Objects[k].Area == 0) continue;
                    Color c = EverythingResult.ColorOf(Objects[k].ObjectId);
                    byte[] mask = Masks[k];
                    Rectangle r = Objects[k].Bounds;
                    for (int y = r.Top; y < r.Bottom; y++)
                    {
                        byte* row = (byte*)data.Scan0 + (long)y * data.Stride;
                        int m = y * Width;
                        for (int x = r.Left; x < r.Right; x++)
                        {
                            if (mask[m + x] == 0) continue;
                            row[3 * x] = (byte)((row[3 * x] + c.B) / 2);
                            row[3 * x + 1] = (byte)((row[3 * x + 1] + c.G) / 2);
                            row[3 * x + 2] = (byte)((row[3 * x + 2] + c.R) / 2);
                        }
                    }
                }
            }
            finally
            {
                bmp.UnlockBits(data);
            }
            return bmp;
        }
    }
}
