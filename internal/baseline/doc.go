// Package baseline stores benchmark baselines by key in a directory that a
// CI cache can carry between jobs, and gives them back only when intact.
//
// A Store keeps each baseline under DIR/<escaped key>/ as data/ (a copy of
// the saved file or directory) and manifest.json (key, creation time, and
// the size and SHA-256 of every file, plus a digest of the manifest
// itself). Save writes into a temporary directory and renames it into
// place. Restore looks a key up exactly, or else takes the newest baseline
// whose key starts with one of the given prefixes (like a CI cache's
// restore-keys), verifies every size and hash, and copies it out; a
// truncated, edited or partial baseline is rejected, never restored, and
// so is one holding a symlink or special file. Restore never removes what
// it did not create: a taken destination is ErrDestinationExists.
package baseline
