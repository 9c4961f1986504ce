package jetstream

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nats-io/nats.go"
)

// A join token is the secret a run's coordinator and its workers share
// out of band (printed by the coordinator, or read by both from a file;
// never sent over NATS). From it and the run's ID each side derives the
// run key (RunKey) that authenticates the run's messages: whoever can
// read or publish on the NATS server but lacks the token can neither
// forge a record nor make a worker send load.

// JoinTokenBytes is the size of a generated join token.
const JoinTokenBytes = 32

// maxJoinTokenFile bounds a join-token file.
const maxJoinTokenFile = 4 << 10

// NewJoinToken returns a fresh random token, hex-encoded.
func NewJoinToken() (string, error) {
	b := make([]byte, JoinTokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating a join token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// CheckJoinToken refuses a token too short to resist guessing.
func CheckJoinToken(tok string) error {
	if len(tok) < 32 {
		return fmt.Errorf("join token is %d characters; use at least 32 (sagebench run prints a 64-character one)", len(tok))
	}
	return nil
}

// ReadJoinToken reads a token from path: its first line, trimmed. The
// file must not be readable by group or others.
func ReadJoinToken(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("join token file: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("join token file %s is readable by others (mode %v); chmod 600 it", path, st.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, maxJoinTokenFile+1))
	if err != nil {
		return "", fmt.Errorf("join token file %s: %w", path, err)
	}
	if len(b) > maxJoinTokenFile {
		return "", fmt.Errorf("join token file %s is larger than %d bytes; it holds one token", path, maxJoinTokenFile)
	}
	tok, _, _ := strings.Cut(string(b), "\n")
	tok = strings.TrimSpace(tok)
	if err := CheckJoinToken(tok); err != nil {
		return "", fmt.Errorf("join token file %s: %w", path, err)
	}
	return tok, nil
}

// RunKey is the key of run's messages: HMAC-SHA256 keyed by the token
// over a label and the run ID (a key of one run verifies nothing of
// another). Nil when there is no token.
func RunKey(token, run string) []byte {
	if token == "" {
		return nil
	}
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("sagebench run key v1\x00"))
	m.Write([]byte(run))
	return m.Sum(nil)
}

// MAC authenticates one message: HMAC-SHA256 under the run key over the
// sending node's name, the subject and the payload, hex-encoded.
func MAC(key []byte, node, subject string, data []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(node))
	m.Write([]byte{0})
	m.Write([]byte(subject))
	m.Write([]byte{0})
	m.Write(data)
	return hex.EncodeToString(m.Sum(nil))
}

// ErrBadMAC is a message whose MAC does not verify.
var ErrBadMAC = errors.New("message authentication failed")

// VerifyMAC checks mac (constant time).
func VerifyMAC(key []byte, node, subject string, data []byte, mac string) error {
	if len(key) == 0 || len(mac) != 2*sha256.Size {
		return ErrBadMAC
	}
	if !hmac.Equal([]byte(MAC(key, node, subject, data)), []byte(mac)) {
		return ErrBadMAC
	}
	return nil
}

// Header keys of a sealed message of a run's graph (see seal).
const (
	hdrNode = "Sb-Node" // the sender: a worker's name, or "coordinator"
	hdrMAC  = "Sb-Mac"  // MAC over the sender, the subject, the headers the run reads and the bytes
)

// coordinatorNode is the sender name of the coordinator's messages.
const coordinatorNode = "coordinator"

// sealed is what a graph message's MAC covers besides the sender and the
// bytes: its subject and every header the run acts on (the credit, the
// kind, the credit key and the Nats-Msg-Id), so that none of them can be
// changed in flight.
func sealed(subject string, h nats.Header) string {
	return strings.Join([]string{subject, h.Get(hdrKind), h.Get(hdrKey), h.Get(hdrMsgID), h.Get(hdrCredit)}, "\x00")
}

// msgID is the Nats-Msg-Id of record id's message on a stage stream: the
// id itself on an unsealed run; on a sealed one a MAC of it under the run
// key, which whoever lacks the key cannot compute — the stream drops a
// publish whose Msg-Id it has seen before checking any MAC, so a
// predictable id would let a forger publish first and have the genuine
// message dropped as its duplicate.
func msgID(key []byte, id string) string {
	if len(key) == 0 {
		return id
	}
	return MAC(key, "", "msg-id", []byte(id))[:32]
}

// seal names node as m's sender and sets its MAC under key; a nil key
// (a run in one process, without a join token) leaves m unsealed. Call it
// after the last header is set.
func seal(m *nats.Msg, key []byte, node string) {
	if len(key) == 0 {
		return
	}
	m.Header.Set(hdrNode, node)
	m.Header.Set(hdrMAC, MAC(key, node, sealed(m.Subject, m.Header), m.Data))
}

// verifySealed checks a graph message sealed with key (nil: nothing to
// check); ErrBadMAC when it is unsealed, altered or sealed with another
// run's key.
func verifySealed(key []byte, subject string, h nats.Header, data []byte) error {
	if len(key) == 0 {
		return nil
	}
	return VerifyMAC(key, h.Get(hdrNode), sealed(subject, h), data, h.Get(hdrMAC))
}
