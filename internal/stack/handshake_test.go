package stack

import (
	"io"
	"net/url"
	"strings"
	"testing"
)

func TestScanListenLine(t *testing.T) {
	tests := []struct {
		name, out string
		want      string // "" = error
	}{
		{"plain", ListenLine + "http://127.0.0.1:4312\n", "http://127.0.0.1:4312"},
		{"after log lines", "starting\nwarming up\n" + ListenLine + "http://127.0.0.1:80\nmore\n", "http://127.0.0.1:80"},
		{"ipv6 loopback", ListenLine + "http://[::1]:9000\n", "http://[::1]:9000"},
		{"off the machine", ListenLine + "http://10.0.0.7:80\n", ""},
		{"a name", ListenLine + "http://localhost.evil.example:80\n", ""},
		{"credentials", ListenLine + "http://u:p@127.0.0.1:80\n", ""},
		{"no port", ListenLine + "http://127.0.0.1\n", ""},
		{"garbage", ListenLine + "\x00\x1b[2J\n", ""},
		{"never", "log\nlog\n", ""},
		{"endless line", strings.Repeat("x", 1<<20), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := scanListenLine(strings.NewReader(tc.out))
			if got != tc.want || (err == nil) != (tc.want != "") {
				t.Fatalf("scanListenLine = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// FuzzScanListenLine: whatever a child prints, the parent gets a loopback
// http URL or an error, and reads at most to the end of that line.
func FuzzScanListenLine(f *testing.F) {
	f.Add([]byte(ListenLine + "http://127.0.0.1:1234\n"))
	f.Add([]byte(ListenLine + "http://[::1]:1\n"))
	f.Add([]byte(ListenLine + "http://0x7f.1:80\n"))
	f.Add([]byte(strings.Repeat(ListenLine, 300)))
	f.Fuzz(func(t *testing.T, out []byte) {
		got, err := scanListenLine(io.LimitReader(strings.NewReader(string(out)), 1<<20))
		if err != nil {
			return
		}
		u, perr := url.Parse(got)
		if perr != nil || u.Scheme != "http" || !loopback(u) {
			t.Fatalf("accepted %q", got)
		}
	})
}
