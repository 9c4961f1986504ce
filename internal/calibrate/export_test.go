package calibrate

// MeasureSlowed is measure with a delay injected into the client path.
var MeasureSlowed = measure

// The export parsers, for the fuzz tests.
var (
	ParseSagebench     = parseSagebenchRequests
	ParseInferencePerf = parseInferencePerfRequests
	ParseAIPerf        = parseAIPerfRecords
	ParseGenAIBench    = parseGenAIBench
	ParseGuideLLM      = parseGuideLLM
)
