using System;
using System.Collections.Generic;

namespace Segrt
{
    /// <summary>
    /// <c>Regions()</c> and <c>Contours()</c> on every mask result: a UNet's, a click's or box's, many prompts',
    /// segment-everything's (each object a label) and a tracked frame's (per object); and the figures per object, its
    /// parts together: <c>Figures()</c> of segment-everything (per object id), <c>Figures(index)</c> of many prompts,
    /// <c>Figures(objectId)</c> of a tracked frame.
    /// </summary>
    public static class MaskOutlines
    {
        /// <summary>The regions of the mask (multi-class: each class a label).</summary>
        /// <param name="result">A UNet result.</param>
        /// <param name="options">null for the defaults.</param>
        /// <returns>The regions.</returns>
        public static IList<MaskRegion> Regions(this UnetResult result, RegionOptions options = null)
        {
            if (result == null) throw new ArgumentNullException(nameof(result));
            if (result.NumClasses > 1 && options == null) options = new RegionOptions { Labels = true };
            return Segrt.Regions.Find(result.Mask, result.Width, result.Height, options);
        }

        /// <summary>The outlines of the mask.</summary>
        /// <param name="result">A UNet result.</param>
        /// <param name="tolerance">Simplification in pixels (0: every border pixel).</param>
        /// <returns>Outer outlines and holes.</returns>
        public static IList<Contour> Contours(this UnetResult result, double tolerance = 0)
        {
            return Segrt.Regions.ContoursOf(Regions(result, new RegionOptions { Tolerance = tolerance, Labels = result != null && result.NumClasses > 1 }));
        }

        /// <summary>The regions of the prompted object's mask.</summary>
        /// <param name="result">A SAM2 click or box result.</param>
        /// <param name="options">null for the defaults.</param>
        /// <returns>The regions (an object may have several parts).</returns>
        public static IList<MaskRegion> Regions(this Sam2Result result, RegionOptions options = null)
        {
            if (result == null) throw new ArgumentNullException(nameof(result));
            return Segrt.Regions.Find(result.Mask, result.Width, result.Height, options);
        }

        /// <summary>The outlines of the prompted object's mask.</summary>
        /// <param name="result">A SAM2 click or box result.</param>
        /// <param name="tolerance">Simplification in pixels.</param>
        /// <returns>Outer outlines and holes.</returns>
        public static IList<Contour> Contours(this Sam2Result result, double tolerance = 0)
        {
            return Segrt.Regions.ContoursOf(Regions(result, new RegionOptions { Tolerance = tolerance }));
        }

        /// <summary>The regions of every object: each object's label is its id.</summary>
        /// <param name="result">A segment-everything result.</param>
        /// <param name="options">null for the defaults.</param>
        /// <returns>The regions, by object id.</returns>
        public static IList<MaskRegion> Regions(this EverythingResult result, RegionOptions options = null)
        {
            if (result == null) throw new ArgumentNullException(nameof(result));
            return Segrt.Regions.Find(result.Labels, result.Width, result.Height, options);
        }

        /// <summary>The outlines of every object (as painted in the label image).</summary>
        /// <param name="result">A segment-everything result.</param>
        /// <param name="tolerance">Simplification in pixels.</param>
        /// <returns>Outer outlines and holes; Label is the object's id.</returns>
        public static IList<Contour> Contours(this EverythingResult result, double tolerance = 0)
        {
            return Segrt.Regions.ContoursOf(Regions(result, new RegionOptions { Tolerance = tolerance }));
        }

        /// <summary>The figures of every object, its parts together, as painted in the label image (object k is label k).</summary>
        /// <param name="result">A segment-everything result.</param>
        /// <param name="options">null for the defaults.</param>
        /// <returns>One per object shown, by id.</returns>
        public static IList<ObjectFigures> Figures(this EverythingResult result, RegionOptions options = null)
        {
            if (result == null) throw new ArgumentNullException(nameof(result));
            return Segrt.Regions.Objects(result.Labels, result.Width, result.Height, options);
        }

        /// <summary>The figures of prompt <paramref name="index"/>'s object, its parts together; null for an empty mask.</summary>
        /// <param name="result">A many-prompts result.</param>
        /// <param name="index">The prompt's index.</param>
        /// <param name="options">null for the defaults.</param>
        /// <returns>The object's figures, or null.</returns>
        public static ObjectFigures Figures(this Sam2PromptsResult result, int index, RegionOptions options = null)
        {
            if (result == null) throw new ArgumentNullException(nameof(result));
            return FirstOrNull(Segrt.Regions.Objects(result.Masks[index], result.Width, result.Height, options));
        }

        /// <summary>The figures of object <paramref name="objectId"/> on this frame, its parts together; null when its mask is empty.</summary>
        /// <param name="frame">A tracked frame.</param>
        /// <param name="objectId">The object's id.</param>
        /// <param name="options">null for the defaults.</param>
        /// <returns>The object's figures, or null.</returns>
        public static ObjectFigures Figures(this TrackedFrame frame, int objectId, RegionOptions options = null)
        {
            if (frame == null) throw new ArgumentNullException(nameof(frame));
            byte[] mask = frame.MaskOf(objectId);
            if (mask == null) throw new ArgumentException("the frame has no object " + objectId, nameof(objectId));
            return FirstOrNull(Segrt.Regions.Objects(mask, frame.Width, frame.Height, options));
        }

        static ObjectFigures FirstOrNull(IList<ObjectFigures> objects)
        {
            return objects.Count > 0 ? objects[0] : null;
        }

        /// <summary>The regions of prompt <paramref name="index"/>'s mask.</summary>
        /// <param name="result">A many-prompts result.</param>
        /// <param name="index">The prompt's index.</param>
        /// <param name="options">null for the defaults.</param>
        /// <returns>The regions.</returns>
        public static IList<MaskRegion> Regions(this Sam2PromptsResult result, int index, RegionOptions options = null)
        {
            if (result == null) throw new ArgumentNullException(nameof(result));
            return Segrt.Regions.Find(result.Masks[index], result.Width, result.Height, options);
        }

        /// <summary>The regions of object <paramref name="objectId"/>'s mask on this frame (empty when absent).</summary>
        /// <param name="frame">A tracked frame.</param>
        /// <param name="objectId">The object's id.</param>
        /// <param name="options">null for the defaults.</param>
        /// <returns>The regions.</returns>
        public static IList<MaskRegion> Regions(this TrackedFrame frame, int objectId, RegionOptions options = null)
        {
            if (frame == null) throw new ArgumentNullException(nameof(frame));
            byte[] mask = frame.MaskOf(objectId);
            if (mask == null) throw new ArgumentException("the frame has no object " + objectId, nameof(objectId));
            return Segrt.Regions.Find(mask, frame.Width, frame.Height, options);
        }

        /// <summary>The outlines of object <paramref name="objectId"/> on this frame.</summary>
        /// <param name="frame">A tracked frame.</param>
        /// <param name="objectId">The object's id.</param>
        /// <param name="tolerance">Simplification in pixels.</param>
        /// <returns>Outer outlines and holes.</returns>
        public static IList<Contour> Contours(this TrackedFrame frame, int objectId, double tolerance = 0)
        {
            return Segrt.Regions.ContoursOf(Regions(frame, objectId, new RegionOptions { Tolerance = tolerance }));
        }
    }
}
