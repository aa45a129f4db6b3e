//go:build fastnow_time

package fastnow

// Built with -tags fastnow_time, every reading goes through package time
// (time.Since and time.Now), so testing/synctest bubbles see their fake
// clock. Source() reports it as the fallback reason.
const forcedTimePackage = true
