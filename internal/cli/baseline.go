package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"text/tabwriter"
	"time"

	"github.com/sagebench/sagebench/internal/baseline"
	"github.com/spf13/cobra"
)

func newBaselineCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "baseline",
		Short: "Save, restore and list benchmark baselines by key (for a CI cache)",
		Long: `Baselines are stored under --dir by key, each with a manifest holding the size
and SHA-256 of every file; a truncated or edited baseline is rejected.

  baseline save    --dir DIR --key KEY PATH             store a file or directory
  baseline restore --dir DIR --key KEY [--restore-key PREFIX]... DEST
                   exact key, else the newest baseline whose key starts with a
                   prefix (tried in order), like a CI cache's restore-keys
  baseline list    --dir DIR [--format text|json]

Exit codes: 0 ok, 4 no baseline found (the gate would be inconclusive),
2 corrupt baseline or bad arguments, 1 I/O error.`,
	}
	cmd.PersistentFlags().StringVar(&dir, "dir", "", "baseline store directory (required)")
	store := func() (baseline.Store, error) {
		if dir == "" {
			return baseline.Store{}, usageErrorf("--dir is required")
		}
		return baseline.Store{Dir: dir}, nil
	}
	cmd.AddCommand(newBaselineSaveCmd(store), newBaselineRestoreCmd(store), newBaselineListCmd(store))
	return cmd
}

type storeFunc func() (baseline.Store, error)

func newBaselineSaveCmd(store storeFunc) *cobra.Command {
	var key string
	cmd := &cobra.Command{
		Use:   "save --dir DIR --key KEY PATH",
		Short: "Store a file or directory as the baseline for KEY",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := store()
			if err != nil {
				return err
			}
			if err := baseline.ValidateKey(key); err != nil {
				return usageErrorf("--key: %v", err)
			}
			m, err := s.Save(key, args[0])
			if err != nil {
				return baselineError(err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "saved baseline %q: %d files, %d bytes\n", m.Key, len(m.Files), totalSize(m))
			return err
		},
	}
	cmd.Flags().StringVar(&key, "key", "", "baseline key, e.g. gobench-linux-main-<sha> (required)")
	return cmd
}

func newBaselineRestoreCmd(store storeFunc) *cobra.Command {
	var key string
	var prefixes []string
	cmd := &cobra.Command{
		Use:   "restore --dir DIR --key KEY [--restore-key PREFIX]... DEST",
		Short: "Restore the baseline for KEY (or the newest matching a prefix) to DEST",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := store()
			if err != nil {
				return err
			}
			if key == "" && len(prefixes) == 0 {
				return usageErrorf("give --key and/or --restore-key")
			}
			m, err := s.Restore(key, prefixes, args[0])
			if err != nil {
				return baselineError(err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "restored baseline %q (saved %s, %d files) to %s\n",
				m.Key, m.Created.Format(time.RFC3339), len(m.Files), args[0])
			return err
		},
	}
	cmd.Flags().StringVar(&key, "key", "", "exact key to restore")
	cmd.Flags().StringArrayVar(&prefixes, "restore-key", nil, "key prefix to fall back to, newest first (repeatable)")
	return cmd
}

func newBaselineListCmd(store storeFunc) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "list --dir DIR",
		Short: "List stored baselines, newest first, with their integrity",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := store()
			if err != nil {
				return err
			}
			if format != "text" && format != "json" {
				return usageErrorf("--format %q: want text or json", format)
			}
			entries, err := s.List()
			if err != nil {
				return withCode(ExitError, err)
			}
			return writeBaselineList(cmd.OutOrStdout(), entries, format)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text|json")
	return cmd
}

func writeBaselineList(w io.Writer, entries []baseline.Entry, format string) error {
	if format == "json" {
		type row struct {
			Key      string             `json:"key"`
			OK       bool               `json:"ok"`
			Error    string             `json:"error,omitempty"`
			Manifest *baseline.Manifest `json:"manifest,omitempty"`
		}
		rows := []row{}
		for _, e := range entries {
			r := row{Key: e.Key, OK: e.Err == nil, Manifest: e.Manifest}
			if e.Err != nil {
				r.Error = e.Err.Error()
			}
			rows = append(rows, r)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tSAVED\tFILES\tBYTES\tSTATUS")
	for _, e := range entries {
		if e.Err != nil {
			fmt.Fprintf(tw, "%s\t-\t-\t-\tREJECTED: %v\n", e.Key, e.Err)
			continue
		}
		m := e.Manifest
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\tok\n", m.Key, m.Created.Format(time.RFC3339), len(m.Files), totalSize(m))
	}
	return tw.Flush()
}

func totalSize(m *baseline.Manifest) int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

// baselineError maps store errors to exit codes.
func baselineError(err error) error {
	switch {
	case errors.Is(err, baseline.ErrNotFound):
		return withCode(ExitInconclusive, err)
	case errors.Is(err, baseline.ErrCorrupt), errors.Is(err, fs.ErrNotExist), errors.Is(err, baseline.ErrDestinationExists):
		return withCode(ExitUsage, err)
	}
	return withCode(ExitError, err)
}
