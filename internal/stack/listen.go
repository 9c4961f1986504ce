package stack

import (
	"context"
	"fmt"
	"net"
	"strings"
)

// listenAddr is the address serve binds, resolved: what is checked is
// what is bound.
type listenAddr struct {
	bind     string   // host:port with the host an IP literal ("" for every interface)
	loopback bool     // every address bound is a loopback one
	hosts    []string // Host names the admin API answers besides loopback IP literals (nil: off loopback)
}

// resolveListen resolves cfg.Listen's host once (a name through
// Options.LookupIP, the hosts file included) and picks the address to
// bind: `--listen localhost:P` binds the address localhost resolves to
// here, and is loopback only if that address is — a hosts file mapping
// localhost elsewhere no longer makes serve listen everywhere without a
// token.
func resolveListen(ctx context.Context, listen string, lookup func(context.Context, string) ([]net.IP, error)) (listenAddr, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listenAddr{}, fmt.Errorf("listen %q is not host:port (%v)", listen, err)
	}
	if host == "" {
		return listenAddr{bind: listen}, nil // every interface
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	if ip == nil {
		ips, err := lookup(ctx, host)
		if err != nil || len(ips) == 0 {
			return listenAddr{}, fmt.Errorf("listen %s: cannot resolve %q (%v); use an IP address such as 127.0.0.1", listen, host, err)
		}
		ip = ips[0]
		for _, x := range ips { // as net.Listen would: an IPv4 address first
			if x.To4() != nil {
				ip = x
				break
			}
		}
	}
	a := listenAddr{bind: net.JoinHostPort(ip.String(), port), loopback: ip.IsLoopback()}
	if a.loopback {
		a.hosts = []string{"localhost"}
		if net.ParseIP(strings.Trim(host, "[]")) == nil && !strings.EqualFold(host, "localhost") {
			a.hosts = append(a.hosts, host)
		}
	}
	return a, nil
}

// lookupIP resolves a host name with the system resolver.
func lookupIP(ctx context.Context, host string) ([]net.IP, error) {
	return net.DefaultResolver.LookupIP(ctx, "ip", host)
}

// boundLoopback reports whether a listener bound loopback only.
func boundLoopback(ln net.Listener) bool {
	ta, ok := ln.Addr().(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}
