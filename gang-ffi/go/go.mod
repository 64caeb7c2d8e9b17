module example.invalid/gang/gang-ffi/go

go 1.22
