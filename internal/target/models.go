package target

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// UnknownModelError says the target does not list a model the workload
// asks for: a configuration error, found before any traffic.
type UnknownModelError struct {
	URL     string   // secret-free
	Missing []string // asked for, not listed
	Have    []string // what GET /v1/models lists
}

func (e *UnknownModelError) Error() string {
	have := "lists no models"
	if len(e.Have) > 0 {
		have = "lists " + quoteList(e.Have, 20)
	}
	return fmt.Sprintf("target %s does not serve model %s (GET /v1/models %s); set the workload's model (qN.llm.model / qN.embedding.model) to one it lists",
		e.URL, quoteList(e.Missing, 20), have)
}

func quoteList(s []string, n int) string {
	q := make([]string, 0, min(len(s), n))
	for _, m := range s[:min(len(s), n)] {
		q = append(q, fmt.Sprintf("%q", m))
	}
	out := strings.Join(q, ", ")
	if len(s) > n {
		out += fmt.Sprintf(" and %d more", len(s)-n)
	}
	return out
}

// maxModelBytes bounds a model name of the target's list kept in an error.
const maxModelBytes = 128

// CheckModels asks the target for its model list (GET /v1/models) and
// returns an *UnknownModelError when one of want is not in it. A target
// that does not answer the list (no such route, not JSON) cannot be
// checked: that is no error here, its requests will say what is wrong.
func (t *Target) CheckModels(ctx context.Context, want []string) error {
	if len(want) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, CheckTimeout)
	defer cancel()
	have, err := t.client.Models(ctx)
	if err != nil {
		return nil
	}
	var missing []string
	for _, m := range want {
		if !slices.Contains(have, m) && !slices.Contains(missing, m) {
			missing = append(missing, m)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	for i, m := range have {
		have[i] = t.redactor.Field(m, maxModelBytes)
	}
	return &UnknownModelError{URL: t.desc, Missing: missing, Have: have}
}
