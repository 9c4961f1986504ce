package q8

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// scrapeTimeout bounds one /metrics scrape.
const scrapeTimeout = 2 * time.Second

// maxMetrics bounds the /metrics body read.
const maxMetrics = 4 << 20

// scrape reads the target's process RSS (MiB) and open files from its
// Prometheus /metrics (process_resident_memory_bytes, process_open_fds).
func scrape(ctx context.Context, client *http.Client, base string) (rss, fds float64, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return 0, 0, false
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, 0, false
	}
	return parseProcessMetrics(io.LimitReader(resp.Body, maxMetrics))
}

// parseProcessMetrics finds the two process gauges in a Prometheus text
// exposition; ok only when both are present and finite.
func parseProcessMetrics(r io.Reader) (rssMiB, fds float64, ok bool) {
	var haveRSS, haveFD bool
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<16)
	for sc.Scan() {
		name, val, found := strings.Cut(sc.Text(), " ")
		if !found || (name != "process_resident_memory_bytes" && name != "process_open_fds") {
			continue
		}
		v, err := strconv.ParseFloat(strings.Fields(val + " x")[0], 64)
		if err != nil || !(v >= 0 && v <= 1e18) { // NaN fails both
			continue
		}
		if name == "process_open_fds" {
			fds, haveFD = v, true
		} else {
			rssMiB, haveRSS = v/(1<<20), true
		}
	}
	return rssMiB, fds, haveRSS && haveFD
}
