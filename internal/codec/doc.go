// Package codec encodes gradient vectors ([]float32) for the wire and
// decodes them back. It models four payloads: JSON float arrays (the
// baseline, via encoding/json), a little-endian float32 frame that decodes
// as a zero-copy view, FP16 (IEEE 754 binary16, round-to-nearest-even) and
// INT8 with one float32 scale.
//
// Binary frames share an 8-byte header: magic "sg", version 1, format
// byte, element count (uint32 little-endian); INT8 adds its float32 scale.
// Decoders check the header and the exact payload length before reading a
// value and return a sentinel error (ErrTruncated, ErrMagic, ErrFormat,
// ErrLength, ErrCorrupt) on bad input; they never panic.
package codec
