package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/target"
	"github.com/sagebench/sagebench/internal/workload"
)

// roundSuffix is the ".rN" of a round's phase name: a target that keeps
// its policy runs one round.
var roundSuffix = regexp.MustCompile(`^\.r\d+$`)

// preflightTimeout bounds the dry run's questions to a URL target.
const preflightTimeout = 3 * time.Second

// ability is whether a target can do something, as far as a dry run
// could tell.
type ability int

const (
	unknown ability = iota // not reached, or it answered neither way
	able
	unable
)

// targetAbilities are a URL target's answers to the dry run's read-only
// preflight: GET /v1/models (or /health), GET /admin/policy and GET
// /admin/engines. No workload request is sent.
type targetAbilities struct {
	reached         bool
	why             string // why it was not reached
	policy, engines ability
	policyNow       string // the policy the target reports
	policyWhy       string
	enginesWhy      string
}

// askTarget runs the preflight against a URL target.
func askTarget(ctx context.Context, cfg target.Config) targetAbilities {
	ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	t, err := target.Open(ctx, cfg, target.Options{})
	if err != nil {
		return targetAbilities{why: err.Error()}
	}
	defer t.Close(context.WithoutCancel(ctx))
	a := targetAbilities{reached: true}
	a.policyNow, err = t.Policy(ctx)
	a.policy, a.policyWhy = abilityOf(err, target.ErrPolicyUnsupported)
	_, err = t.Engines(ctx)
	a.engines, a.enginesWhy = abilityOf(err, target.ErrEnginesUnsupported)
	return a
}

// abilityOf reads an admin call's error: nil is able, unsupported is
// unable, anything else unknown (with why).
func abilityOf(err, unsupported error) (ability, string) {
	switch {
	case err == nil:
		return able, ""
	case errors.Is(err, unsupported):
		return unable, err.Error()
	}
	return unknown, err.Error()
}

// describe is the preflight's outcome as a line of the plan.
func (a targetAbilities) describe() string {
	if !a.reached {
		return "preflight: the target did not answer (" + a.why + "); each phase below says what it needs of the target"
	}
	s := "preflight (read-only GETs): "
	switch a.policy {
	case able:
		s += "it switches policy (GET /admin/policy: " + a.policyNow + ")"
	case unable:
		s += "it cannot switch policy (" + a.policyWhy + ")"
	default:
		s += "its policy API answered neither way (" + a.policyWhy + ")"
	}
	switch a.engines {
	case able:
		s += "; it lists its engines (GET /admin/engines)"
	case unable:
		s += "; it cannot be resized (" + a.enginesWhy + ")"
	}
	return s
}

// planForTarget is plan as it will run on a target of abilities a: only
// the first policy's phases, as "target", when it cannot switch policy;
// only the first scale, as n = 1, when it cannot be resized; phases
// marked conditional when the target could not be asked.
func planForTarget(p workload.Plan, a targetAbilities) workload.Plan {
	first, firstScale := "", 0
	for _, ph := range p.Phases {
		if first == "" && ph.Policy != "" {
			first = ph.Policy
		}
		if firstScale == 0 && ph.Engines > 0 {
			firstScale = ph.Engines
		}
	}
	out := workload.Plan{Notes: p.Notes}
	left := false // the first policy's block of phases has ended
	for _, ph := range p.Phases {
		switch {
		case ph.Policy != "" && a.policy == unable:
			left = left || ph.Policy != first
			if left {
				continue // a target that keeps its policy runs the first block once
			}
			ph.Name = "target" + roundSuffix.ReplaceAllString(strings.TrimPrefix(ph.Name, ph.Policy), "")
			ph.Mix += "; the target's own policy"
		case ph.Policy != "" && a.policy == unknown:
			ph.Mix += "; if the target can switch policy"
		}
		switch {
		case ph.Engines > 0 && a.engines == unable:
			if ph.Engines != firstScale {
				continue
			}
			ph.Name, ph.Mix = "engines=1", ph.Mix+"; the target at its current size, as n = 1"
		case ph.Engines > 0 && a.engines == unknown:
			ph.Mix += "; if the target can be resized"
		}
		out.Phases = append(out.Phases, ph)
	}
	if first != "" && a.policy == unable {
		out.Notes = append(out.Notes, "the target cannot switch policy: it runs once, with its own policy, as phase \"target\"")
	}
	if first != "" && a.policy == unknown {
		out.Notes = append(out.Notes, "if the target cannot switch policy, only the "+first+" phases run, with the target's own policy, as phase \"target\"")
	}
	if firstScale > 0 && a.engines == unable {
		out.Notes = append(out.Notes, "the target cannot be resized (no engines admin API): measured once at its current size, as n = 1; set q4.scale_command to resize it")
	}
	return out
}

// printPreflight prints the preflight line once per URL target.
func printPreflight(w io.Writer, a targetAbilities) {
	fmt.Fprintf(w, "   %s\n", a.describe())
}
