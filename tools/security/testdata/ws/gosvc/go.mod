module example.com/gosvc

go 1.22
