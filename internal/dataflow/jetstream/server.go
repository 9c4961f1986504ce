package jetstream

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// ServerConfig configures an embedded NATS server. The zero value is a
// JetStream-enabled server on 127.0.0.1 at a free port with its store in a
// fresh temporary directory.
type ServerConfig struct {
	Host       string        // default 127.0.0.1
	Port       int           // 0 picks a free port
	StoreDir   string        // "" creates a temporary directory, removed by Shutdown
	ReadyAfter time.Duration // how long to wait for the server to accept connections; default 10s
	// User and Password, when set, are the only credentials the server
	// accepts (StartCluster generates them per run): a client without
	// them is refused at connect.
	User, Password string
}

// Server is an embedded NATS server with JetStream.
type Server struct {
	srv     *server.Server
	tempDir string
}

// StartEmbedded starts a NATS server with JetStream in this process and
// waits until it accepts connections. Shutdown stops it and removes a
// temporary store directory.
func StartEmbedded(ctx context.Context, cfg ServerConfig) (*Server, error) {
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if cfg.Port == 0 {
		cfg.Port = server.RANDOM_PORT
	}
	if cfg.ReadyAfter <= 0 {
		cfg.ReadyAfter = 10 * time.Second
	}
	s := &Server{}
	if cfg.StoreDir == "" {
		dir, err := os.MkdirTemp("", "sagebench-nats-*")
		if err != nil {
			return nil, fmt.Errorf("embedded nats: store dir: %w", err)
		}
		cfg.StoreDir, s.tempDir = dir, dir
	}
	opts := &server.Options{
		Host: cfg.Host, Port: cfg.Port, JetStream: true, StoreDir: cfg.StoreDir,
		NoSigs: true, NoLog: true, ServerName: "sagebench-embedded",
		Username: cfg.User, Password: cfg.Password,
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		s.removeTemp()
		return nil, fmt.Errorf("embedded nats: %w", err)
	}
	s.srv = srv
	go srv.Start()
	ready := make(chan bool, 1)
	go func() { ready <- srv.ReadyForConnections(cfg.ReadyAfter) }()
	select {
	case ok := <-ready:
		if !ok {
			s.Shutdown()
			return nil, fmt.Errorf("embedded nats on %s: not ready for connections within %s", cfg.Host, cfg.ReadyAfter)
		}
	case <-ctx.Done():
		s.Shutdown()
		return nil, ctx.Err()
	}
	return s, nil
}

// URL is the client URL of the server (nats://127.0.0.1:PORT).
func (s *Server) URL() string { return s.srv.ClientURL() }

// Shutdown stops the server, waits for it and removes its temporary store.
func (s *Server) Shutdown() {
	if s.srv != nil {
		s.srv.Shutdown()
		s.srv.WaitForShutdown()
	}
	s.removeTemp()
}

func (s *Server) removeTemp() {
	if s.tempDir != "" {
		_ = os.RemoveAll(s.tempDir)
		s.tempDir = ""
	}
}
