    if [[ $status == 5* ]]; then
