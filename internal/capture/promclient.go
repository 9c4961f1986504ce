package capture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/redact"
)

// MaxAnswerSeries bounds the series of one Prometheus answer, matched by
// the selector or not: a longer answer is refused while it is read.
const MaxAnswerSeries = DefaultMaxSamples

// sameOrigin refuses a redirect to another scheme, host or port: a
// Prometheus server or an exporter that sends the client elsewhere does
// not get an answer from there accepted as its own (nor the request's
// credentials forwarded). A redirect inside the origin (/metrics →
// /metrics/) is followed, at most 5 times.
func sameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("stopped after 5 redirects")
	}
	from := via[0].URL
	if req.URL.Scheme != from.Scheme || req.URL.Host != from.Host {
		return fmt.Errorf("redirect to another origin (%s://%s) refused", req.URL.Scheme, req.URL.Host)
	}
	return nil
}

// withSameOrigin returns hc (nil: a new client) with sameOrigin as its
// redirect policy when it has none.
func withSameOrigin(hc *http.Client) *http.Client {
	if hc == nil {
		return &http.Client{CheckRedirect: sameOrigin}
	}
	if hc.CheckRedirect != nil {
		return hc
	}
	c := *hc
	c.CheckRedirect = sameOrigin
	return &c
}

// rangeAnswer is what one query_range answer leaves once streamed: the
// points by step, and what was left out or noted on the way.
type rangeAnswer struct {
	steps      [][]Series
	duplicates int // series whose labels repeat an earlier one (the first is kept)
}

// queryRange evaluates q over r with one POST to /api/v1/query_range and
// streams the answer: each series is decoded, selected, checked against
// the caps and spread over its steps before the next is read, so a
// hostile answer costs at most one series beyond what is kept.
func queryRange(ctx context.Context, hc *http.Client, base, q string, r rangeSpec, sel *Selector) (*rangeAnswer, error) {
	form := url.Values{"query": {q}, "start": {fmtTime(r.start)}, "end": {fmtTime(r.end)},
		"step": {strconv.FormatFloat(r.step.Seconds(), 'f', -1, 64)}}
	u := strings.TrimRight(base, "/") + "/api/v1/query_range"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 3 {
		return nil, fmt.Errorf("HTTP %s: a redirect is not followed", resp.Status)
	}
	a := &rangeAnswer{steps: make([][]Series, r.n)}
	d := &answerDecoder{dec: json.NewDecoder(resp.Body), r: r, sel: sel, a: a, seen: map[string]bool{}}
	status, err := d.top()
	switch {
	case err == nil && status.Status == "success":
		return a, nil
	case status.Status == "error" && status.ErrorType == "bad_data":
		return nil, &QueryError{Query: q, Msg: redact.Clip(status.Error, 512)}
	case status.Status == "error":
		return nil, fmt.Errorf("HTTP %d: %s: %s", resp.StatusCode, status.ErrorType, redact.Clip(status.Error, 512))
	case err != nil && resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	case err != nil:
		return nil, err
	}
	return nil, fmt.Errorf("HTTP %d: an answer without a status", resp.StatusCode)
}

// rangeSpec is a query's span: n steps from start, step apart.
type rangeSpec struct {
	start, end time.Time
	step       time.Duration
	n          int
}

func fmtTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixNano())/1e9, 'f', -1, 64)
}

// answerStatus is the envelope of a Prometheus API answer.
type answerStatus struct {
	Status, ErrorType, Error string
}

// answerDecoder walks one answer token by token.
type answerDecoder struct {
	dec    *json.Decoder
	r      rangeSpec
	sel    *Selector
	a      *rangeAnswer
	seen   map[string]bool
	series int // series read (kept or not)
	kept   int
}

// top reads the envelope {"status":…,"data":{…},"errorType":…,"error":…}.
func (d *answerDecoder) top() (answerStatus, error) {
	var st answerStatus
	err := d.object(func(key string) error {
		switch key {
		case "status":
			return d.dec.Decode(&st.Status)
		case "errorType":
			return d.dec.Decode(&st.ErrorType)
		case "error":
			return d.dec.Decode(&st.Error)
		case "data":
			return d.data()
		}
		return d.skip()
	})
	if err != nil {
		return st, fmt.Errorf("reading the answer: %w", err)
	}
	return st, nil
}

func (d *answerDecoder) data() error {
	if t, err := d.dec.Token(); err != nil || t == nil { // "data": null (an error answer)
		if err != nil {
			return err
		}
		return nil
	} else if t != json.Delim('{') {
		return errors.New(`"data" is not an object`)
	}
	return d.fields(func(key string) error {
		switch key {
		case "resultType":
			var rt string
			if err := d.dec.Decode(&rt); err != nil {
				return err
			}
			if rt != "matrix" {
				return fmt.Errorf("query returned %s, want a range vector (matrix)", rt)
			}
			return nil
		case "result":
			return d.result()
		}
		return d.skip()
	})
}

// result streams the series array.
func (d *answerDecoder) result() error {
	if t, err := d.dec.Token(); err != nil {
		return err
	} else if t != json.Delim('[') {
		return errors.New(`"result" is not a list of series (want a range vector)`)
	}
	for d.dec.More() {
		if err := d.oneSeries(); err != nil {
			return err
		}
	}
	_, err := d.dec.Token()
	return err
}

// rawSeries is one series of a matrix as Prometheus writes it.
type rawSeries struct {
	Metric map[string]string `json:"metric"`
	Values [][2]any          `json:"values"`
}

func (d *answerDecoder) oneSeries() error {
	if d.series++; d.series > MaxAnswerSeries {
		return &LimitError{Source: "the answer", What: "series", Limit: MaxAnswerSeries}
	}
	var rs rawSeries
	if err := d.dec.Decode(&rs); err != nil {
		return err
	}
	base := seriesOf(rs.Metric)
	if !d.sel.Keep(base) {
		return nil
	}
	key := base.Key()
	if d.seen[key] {
		d.a.duplicates++
		return nil
	}
	d.seen[key] = true
	if d.kept++; d.kept > d.sel.limit() {
		return &CardinalityError{Source: "the answer", Got: d.kept, Max: d.sel.limit()}
	}
	for _, p := range rs.Values {
		if err := d.point(base, p); err != nil {
			return err
		}
	}
	return nil
}

// point puts one [time, "value"] pair on its step. A value that does not
// fit a float64 ("1e309") is ±Inf, counted as non-finite like "+Inf".
func (d *answerDecoder) point(base Series, p [2]any) error {
	ts, ok := p[0].(float64)
	vs, ok2 := p[1].(string)
	if !ok || !ok2 {
		return fmt.Errorf("a point %v: want [unix time, \"value\"]", p)
	}
	v, err := strconv.ParseFloat(vs, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("a point's value %q: not a number", redact.Clip(vs, 64))
	}
	// in float: a hostile time (1e300) must not wrap an integer
	off := math.Round((ts*1e9 - float64(d.r.start.UnixNano())) / float64(d.r.step))
	if !(off >= 0 && off < float64(d.r.n)) {
		return nil
	}
	i := int(off)
	s := base
	s.Value = v
	d.a.steps[i] = append(d.a.steps[i], s)
	return nil
}

// object reads a whole JSON object, calling field for each key with the
// decoder before its value.
func (d *answerDecoder) object(field func(string) error) error {
	t, err := d.dec.Token()
	if err != nil {
		return err
	}
	if t != json.Delim('{') {
		return errors.New("not a JSON object")
	}
	return d.fields(field)
}

// fields reads the rest of an object whose '{' was read.
func (d *answerDecoder) fields(field func(string) error) error {
	for d.dec.More() {
		t, err := d.dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		if err := field(key); err != nil {
			return err
		}
	}
	_, err := d.dec.Token() // '}'
	return err
}

// skip reads one value of any kind without keeping it.
func (d *answerDecoder) skip() error {
	var raw json.RawMessage
	return d.dec.Decode(&raw)
}
