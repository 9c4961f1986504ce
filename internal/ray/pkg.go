package ray

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Package is a working_dir package: a zip and its content-addressed URI.
type Package struct {
	URI string // gcs://_ray_pkg_<sha1>.zip
	Zip []byte
}

// NewPackage zips files (name → content) deterministically: sorted names,
// a fixed modification time, so the same files give the same URI.
func NewPackage(files map[string][]byte) (Package, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate,
			Modified: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			return Package{}, fmt.Errorf("ray: packaging %s: %w", name, err)
		}
		if _, err := w.Write(files[name]); err != nil {
			return Package{}, fmt.Errorf("ray: packaging %s: %w", name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return Package{}, fmt.Errorf("ray: packaging: %w", err)
	}
	sum := sha1.Sum(buf.Bytes())
	return Package{URI: "gcs://_ray_pkg_" + hex.EncodeToString(sum[:]) + ".zip", Zip: buf.Bytes()}, nil
}

// packagePath is the API path of a gcs:// URI.
func packagePath(uri string) (string, error) {
	name, ok := strings.CutPrefix(uri, "gcs://")
	if !ok || name == "" || strings.Contains(name, "/") {
		return "", fmt.Errorf("ray: package URI %q: want gcs://<name>.zip", uri)
	}
	return "/api/packages/gcs/" + name, nil
}

// ErrPackageTooLarge is a package over MaxPackageBytes, refused before
// its upload.
var ErrPackageTooLarge = errors.New("ray: the working_dir package is larger than Ray's dashboard accepts")

// Upload puts p on the cluster unless it is already there
// (GET /api/packages/gcs/<name> answers 200; 404 means upload). A package
// over MaxPackageBytes is refused first; the PUT has UploadTimeout.
func (c *Client) Upload(ctx context.Context, p Package) error {
	path, err := packagePath(p.URI)
	if err != nil {
		return err
	}
	if len(p.Zip) > MaxPackageBytes {
		return fmt.Errorf("%w: %d bytes, the limit is %d (100 MiB, DASHBOARD_CLIENT_MAX_SIZE): fewer questions (--total-requests) make the plan smaller", ErrPackageTooLarge, len(p.Zip), MaxPackageBytes)
	}
	err = c.do(ctx, http.MethodGet, path, "", nil, nil)
	switch {
	case err == nil:
		return nil
	case !IsStatus(err, http.StatusNotFound):
		return err
	}
	return c.doWith(ctx, c.upload, http.MethodPut, path, "application/zip", p.Zip, nil)
}
