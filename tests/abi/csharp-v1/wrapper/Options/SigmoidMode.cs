namespace Segrt
{
    /// <summary>Whether segrt applies a sigmoid to the model's output.</summary>
    public enum SigmoidMode
    {
        /// <summary>Only when the output looks like logits (values outside [0, 1]).</summary>
        Auto = 0,
        /// <summary>Always.</summary>
        On = 1,
        /// <summary>Never (the model outputs probabilities).</summary>
        Off = 2,
    }
}
