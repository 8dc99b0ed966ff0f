    bytes[$host]=$(( ${bytes[$host]:-0} + size ))
