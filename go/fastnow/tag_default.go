//go:build !fastnow_time

package fastnow

const forcedTimePackage = false
