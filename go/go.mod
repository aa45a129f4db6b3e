module github.com/fastnow/fastnow/go

go 1.22

require golang.org/x/sys v0.29.0
