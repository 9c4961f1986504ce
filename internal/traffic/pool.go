package traffic

import (
	"errors"
	"fmt"
)

// Pool is the embedded reference stack a Q sizes its load against:
// LLMEngines simulated engines of Profile with LLMSlots running
// sequences each (fewer than the profile's batch makes the gateway queue
// hold the overload, where policies differ) and one CPU embedder.
type Pool struct {
	LLMEngines int    `yaml:"llm_engines" json:"llm_engines"`
	LLMSlots   int    `yaml:"llm_slots" json:"llm_slots"`
	Profile    string `yaml:"profile" json:"profile"`
}

// Validate names key (e.g. "q6.stack") in its error.
func (p Pool) Validate(key string) error {
	if p.LLMEngines < 1 || p.LLMSlots < 1 || p.Profile == "" {
		return errors.New(key + ": llm_engines ≥ 1, llm_slots ≥ 1 and profile are required")
	}
	return nil
}

// YAML is the `sagebench serve` stack config of the pool, starting under
// policy.
func (p Pool) YAML(policy string) []byte {
	b := fmt.Appendf(nil, "policy: %s\nindex: {size: 200}\nengines:\n", policy)
	for i := range p.LLMEngines {
		b = fmt.Appendf(b, "  - {id: llm-%d, kind: llm, profile: %s, slots: %d}\n", i, p.Profile, p.LLMSlots)
	}
	return append(b, "  - {id: embed-0, kind: embedding, profile: bge-small-cpu}\n"...)
}
