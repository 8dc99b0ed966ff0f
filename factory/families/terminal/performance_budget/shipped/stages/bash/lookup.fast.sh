    dc=${dc_of[$host]:-}
