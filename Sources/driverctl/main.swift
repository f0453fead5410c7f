import DriverctlCommands

// The development build's own driverctl; the package's is a link to driverd (see DriverdEntry).
Driverctl.main()
