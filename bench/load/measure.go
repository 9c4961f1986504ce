package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sagebench/sagebench/internal/load"
)

// drive runs the sagebench driver at a constant rate against url.
func drive(args []string) error {
	fs := flag.NewFlagSet("drive", flag.ContinueOnError)
	url := fs.String("url", "", "target URL (loopback)")
	rate := fs.Float64("rate", 1000, "requests per second")
	dur := fs.Duration("duration", 10*time.Second, "schedule length")
	spawn := fs.Bool("spawn", false, "one goroutine per request instead of the worker pool")
	busy := fs.Bool("busy", false, "pacer busy-waits the last 2 ms instead of sleeping the OS thread (PreciseClock.Busy)")
	slack := fs.Duration("slack", 0, "Driver.Slack (0: default; negative: no kernel timer)")
	fineGap := fs.Duration("fine-gap", 0, "Driver.FineGap (negative: precise pacer)")
	name := fs.String("name", "", "tool name to print")
	if err := fs.Parse(args); err != nil {
		return err
	}
	s, err := load.NewSchedule(load.ScheduleConfig{Process: load.ProcessConstant, Rate: *rate, Duration: *dur}, 1)
	if err != nil {
		return err
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		MaxIdleConns: 10000, MaxIdleConnsPerHost: 10000, IdleConnTimeout: time.Minute}}
	var ok atomic.Int64
	hit := func(ctx context.Context, _ int, _ time.Time) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, *url+"/v1/embeddings", strings.NewReader(EmbedBody))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			ok.Add(1)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), *dur+30*time.Second)
	defer cancel()
	d := &load.Driver{Spawn: *spawn, Drain: 5 * time.Second, Clock: load.PreciseClock{Busy: *busy}, Slack: *slack, FineGap: *fineGap}
	rep := d.Run(ctx, s, hit)
	tool := "bare-driver"
	if *spawn {
		tool += "-spawn"
	}
	if *busy {
		tool += "-busy"
	}
	if *name != "" {
		tool = *name
	}
	sends := make([]time.Duration, 0, len(rep.Lags)) // actual dispatch offsets
	lags := make([]time.Duration, 0, len(rep.Lags))
	for i, l := range rep.Lags {
		if l != load.NotDispatched {
			sends = append(sends, s.Offsets[i]+l)
			lags = append(lags, l)
		}
	}
	return printJSON(measurement(tool, *rate, s.Len(), sends, lags, int(ok.Load())))
}

// measurement computes the shared numbers. delivered % = sent/scheduled ×
// (intended span of the schedule) / (actual span from start to the last
// send), capped at 100: a driver that falls behind stretches its span.
func measurement(tool string, rate float64, scheduled int, sends, lags []time.Duration, ok int) Measurement {
	m := Measurement{Tool: tool, Rate: rate, Scheduled: scheduled, Sent: len(sends), OK: ok}
	var last time.Duration
	for _, s := range sends {
		last = max(last, s)
	}
	intended := time.Duration(float64(scheduled-1) / rate * 1e9)
	if last > 0 && scheduled > 0 {
		m.DeliveredPct = 100 * float64(len(sends)) / float64(scheduled) * math.Min(1, intended.Seconds()/last.Seconds())
	}
	sum := load.Summarize(lags)
	m.LagP50us = float64(sum.P50.Microseconds())
	m.LagP99us = float64(sum.P99.Microseconds())
	m.LagMaxus = float64(sum.Max.Microseconds())
	return m
}

// vegetaResult is the part of `vegeta encode --to json` we read.
type vegetaResult struct {
	Seq       uint64    `json:"seq"`
	Code      int       `json:"code"`
	Timestamp time.Time `json:"timestamp"`
}

// vegetaLag reads vegeta results. vegeta stamps each result with the time
// its worker began the hit, and numbers hits by seq in pacer order; with a
// constant pacer the intended time of hit n is began + n/rate. began is not
// in the output, so it is estimated as min over hits of (timestamp − n/rate)
// — the most favourable choice for vegeta (its least late hit gets lag 0).
func vegetaLag(args []string) error {
	fs := flag.NewFlagSet("vegeta-lag", flag.ContinueOnError)
	rate := fs.Float64("rate", 1000, "the -rate vegeta ran with")
	dur := fs.Duration("duration", 10*time.Second, "the -duration vegeta ran with")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var res []vegetaResult
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var r vegetaResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return fmt.Errorf("vegeta results line %d: %w", len(res)+1, err)
		}
		res = append(res, r)
	}
	if err := sc.Err(); err != nil || len(res) == 0 {
		return fmt.Errorf("no vegeta results on stdin (%v)", err)
	}
	gap := func(r vegetaResult) time.Duration { return time.Duration(float64(r.Seq) / *rate * 1e9) }
	began := res[0].Timestamp.Add(-gap(res[0]))
	for _, r := range res {
		if b := r.Timestamp.Add(-gap(r)); b.Before(began) {
			began = b
		}
	}
	sends := make([]time.Duration, len(res))
	lags := make([]time.Duration, len(res))
	ok := 0
	for i, r := range res {
		sends[i] = r.Timestamp.Sub(began)
		lags[i] = sends[i] - gap(r)
		if r.Code == http.StatusOK {
			ok++
		}
	}
	scheduled := int(math.Round(*rate * dur.Seconds()))
	return printJSON(measurement("vegeta", *rate, scheduled, sends, lags, ok))
}
