package calibrate

// MeasureSlowed is measure with a delay injected into the client path.
var MeasureSlowed = measure
