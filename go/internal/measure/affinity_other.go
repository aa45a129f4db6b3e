//go:build !linux

package measure

func twoCPUs() [2]int { return [2]int{-1, -1} }

func pinTo(int) bool { return false }

func restoreAffinity() {}
