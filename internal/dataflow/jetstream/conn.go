package jetstream

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// Auth holds the credentials for a NATS connection. They are used to
// connect and never written to records, logs or errors.
type Auth struct {
	CredsFile string // a NATS .creds file (JWT + NKey seed)
	NKeyFile  string // a file holding an NKey seed (nats.NkeyOptionFromSeed)
	Token     string
	User      string
	Password  string
	// TLS: CAFile verifies the server; CertFile and KeyFile are the
	// client's certificate (mutual TLS, which also authenticates).
	CAFile, CertFile, KeyFile string
}

// Anonymous reports whether a carries no credential at all (TLS with a
// CA only verifies the server, it does not authenticate the client).
func (a Auth) Anonymous() bool {
	return a.CredsFile == "" && a.NKeyFile == "" && a.Token == "" && a.User == "" && a.CertFile == ""
}

// InsecureError is an outside NATS server to be used without credentials:
// anyone who can reach it could read the run's plans and publish into it.
type InsecureError struct{ URL string }

func (e *InsecureError) Error() string {
	return fmt.Sprintf("refusing to use NATS at %s without credentials: anyone who reaches it could read the run and publish into it; "+
		"give credentials (NATS_CREDS, NATS_NKEY, NATS_TOKEN, NATS_USER/NATS_PASSWORD, or a client certificate NATS_CERT/NATS_KEY) or pass --nats-insecure", e.URL)
}

// CheckAuth refuses an anonymous connection to url unless insecure.
func CheckAuth(url string, a Auth, insecure bool) error {
	if insecure || !a.Anonymous() || HasCredentials(url) {
		return nil
	}
	return &InsecureError{URL: Redact(url)}
}

// ConnConfig says how to reach a NATS server.
type ConnConfig struct {
	URL  string // nats://host:port (comma-separated for a cluster)
	Auth Auth
	Name string // connection name shown by the server; optional
	// ConnectTimeout bounds the first connection; default 3s.
	ConnectTimeout time.Duration
	// Logf, if set, hears of disconnections and reconnections.
	Logf func(format string, args ...any)
}

// ConnectError is returned when the server at URL cannot be reached.
type ConnectError struct {
	URL string // redacted: no user info
	Err error
}

func (e *ConnectError) Error() string {
	return fmt.Sprintf("connecting to NATS at %s: %v", e.URL, e.Err)
}

func (e *ConnectError) Unwrap() error { return e.Err }

// URLError is a server URL that is not a NATS URL: a usage error,
// refused before anything is dialled.
type URLError struct{ Err error }

func (e *URLError) Error() string { return "nats url " + e.Err.Error() }
func (e *URLError) Unwrap() error { return e.Err }

// Redact returns u (one URL or a comma-separated list) with any user info
// (user, password, token) removed, also from a URL that does not parse.
func Redact(u string) string {
	parts := strings.Split(u, ",")
	for i, one := range parts {
		parts[i] = redactOne(one)
	}
	return strings.Join(parts, ",")
}

func redactOne(u string) string {
	p, err := url.Parse(u)
	if err == nil {
		p.User = nil
		return p.String()
	}
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	host, path, _ := strings.Cut(rest, "/")
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		host = host[at+1:]
	}
	if path != "" {
		host += "/" + path
	}
	return scheme + "://" + host
}

// Schemes are the URL schemes a NATS client dials.
var Schemes = []string{"nats", "tls", "ws", "wss"}

// CheckURL checks that u (one URL or a comma-separated list, as
// nats.Connect takes) names NATS servers: a scheme of Schemes and a host.
// Anything else (an http:// URL, a bare host) would be dialled and then
// waited on; the error names the URL without its credentials.
func CheckURL(u string) error {
	for _, one := range strings.Split(u, ",") {
		one = strings.TrimSpace(one)
		p, err := url.Parse(one)
		if err != nil || p.Host == "" || !slices.Contains(Schemes, p.Scheme) {
			return fmt.Errorf("%q: want nats://host:port (or tls://, ws://, wss://; several comma-separated)", Redact(one))
		}
	}
	return nil
}

// HasCredentials says whether one of the comma-separated URLs of u
// carries user info (user:password@host or a token@host).
func HasCredentials(u string) bool {
	for _, one := range strings.Split(u, ",") {
		one = strings.TrimSpace(one)
		if p, err := url.Parse(one); err != nil || p.User != nil || strings.Contains(one, "@") {
			return true
		}
	}
	return false
}

// tlsOptions are the TLS options of a (none without TLS files).
func (a Auth) tlsOptions() ([]nats.Option, error) {
	var opts []nats.Option
	if a.CAFile != "" {
		opts = append(opts, nats.RootCAs(a.CAFile))
	}
	if (a.CertFile == "") != (a.KeyFile == "") {
		return nil, errors.New("a client certificate needs both its cert and key files (NATS_CERT and NATS_KEY)")
	}
	if a.CertFile != "" {
		opts = append(opts, nats.ClientCert(a.CertFile, a.KeyFile))
	}
	return opts, nil
}

// Client pings: a connection is stale after maxPingsOut unanswered ones.
const (
	pingInterval = 2 * time.Second
	maxPingsOut  = 3
)

// Connect dials the server. The first connection fails within
// ConnectTimeout with a *ConnectError naming the URL; after that the
// connection reconnects on its own, without limit, also when the link goes
// silent (pings unanswered for 6-8 s).
func Connect(c ConnConfig) (*nats.Conn, error) {
	if c.URL == "" {
		return nil, &ConnectError{URL: "(none)", Err: errors.New("no URL given (--nats-url)")}
	}
	if err := CheckURL(c.URL); err != nil {
		return nil, &URLError{Err: err}
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 3 * time.Second
	}
	opts := []nats.Option{
		nats.Name(c.Name), nats.Timeout(c.ConnectTimeout),
		nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond),
		// A link gone dark (no RST) shows only as unanswered pings: with
		// the client's defaults (every 2 min, 2 outstanding) a run would
		// stall for minutes; this way it reconnects within 6-8 s.
		nats.PingInterval(pingInterval), nats.MaxPingsOutstanding(maxPingsOut),
	}
	if c.Logf != nil {
		logf := c.Logf
		opts = append(opts,
			nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
				if err != nil { // nil: closed on purpose
					logf("nats: disconnected: %v", err)
				}
			}),
			nats.ReconnectHandler(func(nc *nats.Conn) { logf("nats: reconnected to %s", Redact(nc.ConnectedUrl())) }))
	}
	tlsOpts, err := c.Auth.tlsOptions()
	if err != nil {
		return nil, &ConnectError{URL: Redact(c.URL), Err: err}
	}
	opts = append(opts, tlsOpts...)
	switch {
	case c.Auth.CredsFile != "":
		opts = append(opts, nats.UserCredentials(c.Auth.CredsFile))
	case c.Auth.NKeyFile != "":
		o, err := nats.NkeyOptionFromSeed(c.Auth.NKeyFile)
		if err != nil {
			return nil, &ConnectError{URL: Redact(c.URL), Err: fmt.Errorf("nkey seed file: %w", err)}
		}
		opts = append(opts, o)
	case c.Auth.Token != "":
		opts = append(opts, nats.Token(c.Auth.Token))
	case c.Auth.User != "":
		opts = append(opts, nats.UserInfo(c.Auth.User, c.Auth.Password))
	}
	nc, err := nats.Connect(c.URL, opts...)
	if err != nil {
		return nil, &ConnectError{URL: Redact(c.URL), Err: err}
	}
	return nc, nil
}
