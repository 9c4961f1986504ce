// Package chart draws sagebench's figures in one house style: the
// Liberation Sans face (metric-compatible with Arial and Helvetica, so a
// browser without it lays text out the same), the Okabe–Ito
// colour-blind-safe palette with a dash pattern and a marker per series
// (readable in greyscale), axes with ticks at round values, and legends
// outside the data area.
//
// Model: a Figure is one or more panels (gonum/plot plots) laid out in a
// grid under a shared legend strip, at the width of a report page, a
// paper column or a paper page. Panels are built with the helpers here:
// grouped bars with confidence intervals and brackets, lines and
// markers, shaded spans and event marks on time axes, horizontal bound
// lines, and CDFs. A figure with nothing to draw says why in its body.
//
// Pipeline: build panels → Figure.Render (SVG, PDF or PNG; byte-identical
// for the same input: no timestamps, one embedded face) → optionally
// CheckText, which replays the drawing on a recording canvas and reports
// every pair of text boxes that overlap and every text box that leaves
// the canvas (the tests' collision check, before the browser's).
package chart
