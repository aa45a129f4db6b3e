module github.com/fastnow/fastnow/tools/gomodzip

go 1.26.0

require (
	github.com/google/licensecheck v0.3.1
	golang.org/x/mod v0.41.0
)
