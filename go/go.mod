module github.com/fastnow/fastnow/go

go 1.22
