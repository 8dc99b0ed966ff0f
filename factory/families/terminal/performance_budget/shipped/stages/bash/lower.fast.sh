    host=${host,,}
