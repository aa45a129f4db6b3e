// Package counter is the CPU counter instructions fastnow is built on, one
// assembly function each (Go cannot inline assembly), shared by the fastnow
// package and the report's bare-counter baseline.
package counter
