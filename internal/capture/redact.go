package capture

import "github.com/sagebench/sagebench/internal/redact"

// labelValue is the one rule for a label value that is kept: masked
// whole when the label's name is credential-like (password, api_key,
// authorization, …: redact.CredentialName), whatever it holds; otherwise
// passed through rule (nil: URL passwords only).
func labelValue(rule func(string) string, name, value string) string {
	if redact.CredentialName(name) && value != "" {
		return redact.Mask
	}
	if rule == nil {
		return redact.URL(value)
	}
	return rule(value)
}

// redactLabels applies labelValue to every label (and rule to every
// label name); nil stays nil.
func redactLabels(rule func(string) string, in map[string]string) map[string]string {
	if len(in) == 0 {
		return in
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		name := k
		if rule != nil {
			name = rule(k)
		}
		out[name] = labelValue(rule, k, v)
	}
	return out
}

// Redact applies one rule to every string of the capture that a peer or
// the command line could have put a credential in — target URLs and
// names, error texts, notes, metric names and labels (credential-named
// labels masked whole) — before it is written or printed. rule nil
// masks URL passwords and credential-named labels only. Run applies it
// to every capture it returns, in both modes.
func (c *Capture) Redact(rule func(string) string) {
	if rule == nil {
		rule = redact.URL
	}
	for i := range c.Targets {
		t := &c.Targets[i]
		t.URL = rule(t.URL)
		for j := range t.Errors {
			t.Errors[j] = rule(t.Errors[j])
		}
	}
	for i := range c.Windows {
		for j := range c.Windows[i].Missing {
			c.Windows[i].Missing[j] = rule(c.Windows[i].Missing[j])
		}
	}
	for i := range c.Metrics {
		m := &c.Metrics[i]
		m.Target, m.Name = rule(m.Target), rule(m.Name)
		m.Labels = redactLabels(rule, m.Labels)
	}
	for i := range c.Notes {
		c.Notes[i] = rule(c.Notes[i])
	}
}
