package calibrate

import (
	"bytes"
	"fmt"
	"path/filepath"

	"github.com/sagebench/sagebench/internal/protocol"
	"github.com/sagebench/sagebench/internal/record"
)

// readSagebench reads a sagebench run directory (…/<exp>/rep-N with
// run.json and requests.jsonl): per request TTFT and E2E from the
// intended send (schedule lag included, sagebench's definition), ITL as
// the mean gap between timed tokens; its own medians from run.json's LLM
// group (HDR histogram, 3 significant digits).
func readSagebench(path string) (Export, error) { return readSagebenchFrom(path, false) }

// readSagebenchSent is readSagebench with TTFT and E2E counted from the
// actual send (schedule lag excluded), the definition every peer uses.
func readSagebenchSent(path string) (Export, error) { return readSagebenchFrom(path, true) }

func readSagebenchFrom(path string, fromSent bool) (Export, error) {
	reqPath, err := findFile(path, "requests.jsonl")
	if err != nil {
		return Export{}, err
	}
	b, err := readBounded(reqPath)
	if err != nil {
		return Export{}, err
	}
	e, err := parseSagebenchRequests(b, fromSent)
	if err != nil {
		return Export{}, err
	}
	run, err := record.ReadRun(filepath.Join(filepath.Dir(reqPath), "run.json"))
	if err != nil {
		e.Notes = append(e.Notes, "no run.json beside requests.jsonl: own medians unknown")
		return e, nil
	}
	sagebenchOwn(&e, run.Summary, fromSent)
	return e, nil
}

func parseSagebenchRequests(b []byte, fromSent bool) (Export, error) {
	var e Export
	err := record.ReadRequests(bytes.NewReader(b), "requests.jsonl", func(line int, r record.Request) {
		if r.Kind != "request" || r.Type != protocol.TypeLLM {
			return
		}
		if !r.OK {
			e.Failed++
			return
		}
		var s Sample
		lag := 0.0
		if fromSent {
			lag = r.LagMs
		}
		if r.FirstToken > 0 {
			s.set(TTFT, r.TTFTMs-lag)
		}
		s.set(E2E, r.E2EMs-lag)
		if n := len(r.TokenNS); n > 1 && r.TokenNSDropped == 0 {
			s.set(ITL, float64(r.TokenNS[n-1]-r.TokenNS[0])/1e6/float64(n-1))
		}
		if r.OutputTok > 0 {
			s.set(OutputTokens, float64(r.OutputTok))
		}
		e.Requests = append(e.Requests, s)
	})
	if err != nil {
		return Export{}, err
	}
	return e, nil
}

// sagebenchOwn takes the own medians from the LLM group of run.json:
// TTFT and E2E from the intended send, or the service time (E2E from the
// actual send) when fromSent; run.json has no TTFT from the actual send.
func sagebenchOwn(e *Export, s record.Summary, fromSent bool) {
	for _, g := range s.Groups {
		if g.Labels["type"] != protocol.TypeLLM || len(g.Labels) != 1 {
			continue
		}
		switch {
		case fromSent && g.Service.Count > 0:
			e.own(E2E, g.Service.P50)
		case !fromSent && g.TTFT.Count > 0:
			e.own(TTFT, g.TTFT.P50)
			e.own(E2E, g.E2E.P50)
		}
	}
	e.Lag = fmt.Sprintf("schedule lag p50 %.3f ms, p99 %.3f ms; delivered %.2f of %.2f req/s",
		s.ScheduleLag.P50, s.ScheduleLag.P99, s.DeliveredRate, s.TargetRate)
}
