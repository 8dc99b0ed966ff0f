    bytes[$host]=$(expr "${bytes[$host]:-0}" + "$size")
