package jetstream

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Every stream of a run is named StreamPrefix + run ID + "_" + suffix, and
// every subject starts with "sagebench.<run>.".
const StreamPrefix = "SAGEBENCH_"

// Header keys of the messages between stages.
const (
	hdrMsgID  = "Nats-Msg-Id" // JetStream's duplicate detection key
	hdrCredit = "Sb-Credit"   // termination credit carried by the record
	hdrKind   = "Sb-Kind"     // on the results stream: out, err, ret, dead
	hdrKey    = "Sb-Key"      // on the results stream: the credit's dedup key
)

// Kinds of the messages on a run's results stream.
const (
	kindOut  = "out"  // an output of the last stage
	kindErr  = "err"  // an error record
	kindRet  = "ret"  // a credit return: the stage emitted nothing
	kindDead = "dead" // a dead-lettered record
	kindRej  = "rej"  // a worker dropped a stage message not sealed with the run key
)

// unit is the credit a submitted record carries; outputs split it, and the
// run has drained when the sink has collected unit per submitted record.
const unit = uint64(1) << 40

var runPattern = regexp.MustCompile(`^[A-Za-z0-9-]{1,32}$`)

// NewRunID returns a random run ID.
func NewRunID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func validRun(run string) error {
	if !runPattern.MatchString(run) {
		return fmt.Errorf("run ID %q: must be 1-32 letters, digits or '-'", run)
	}
	return nil
}

// names derives the stream, consumer and subject names of one run.
type names struct{ run string }

func (n names) stageStream(i int) string  { return StreamPrefix + n.run + "_S" + strconv.Itoa(i) }
func (n names) stageSubject(i int) string { return "sagebench." + n.run + ".s." + strconv.Itoa(i) }
func (n names) stageConsumer(i int) string {
	return "stage" + strconv.Itoa(i)
}
func (n names) resultsStream() string  { return StreamPrefix + n.run + "_R" }
func (n names) resultsSubject() string { return "sagebench." + n.run + ".r" }
func (n names) deadStream() string     { return StreamPrefix + n.run + "_D" }
func (n names) deadSubject() string    { return "sagebench." + n.run + ".dead" }
func (n names) sinkConsumer() string   { return "sink" }
func (n names) joinSubject() string    { return "sagebench." + n.run + ".join" }
func (n names) endSubject() string     { return "sagebench." + n.run + ".end" }
func (n names) pingSubject() string    { return "sagebench." + n.run + ".ping" }
func (n names) clockSubject() string   { return "sagebench." + n.run + ".clock" }

// anyJoinSubject is where a worker started without --run asks to join.
const anyJoinSubject = "sagebench.join"

// runOfStream returns the run ID of a sagebench stream name.
func runOfStream(stream string) (string, bool) {
	rest, ok := strings.CutPrefix(stream, StreamPrefix)
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(rest, '_')
	if i <= 0 {
		return "", false
	}
	return rest[:i], true
}
