    norm=${path//+([0-9])/N}
