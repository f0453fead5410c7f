#!/usr/bin/env bash
# After the integration tests: everything the daemons logged must be free of customer data (names, phones,
# OTP codes, message texts) of the worlds the tests use (dispatch-sim's built-in one, the demo scenario and
# the texts the tests send). Fails listing the lines that leak.
set -euo pipefail
logs=${1:?usage: check-log-privacy.sh LOG_DIR}
shopt -s nullglob
files=("$logs"/*.log)
if ((${#files[@]} < 20)); then
    echo "check-log-privacy: only ${#files[@]} daemon logs in $logs; the integration tests should leave dozens" >&2
    exit 1
fi
patterns=(
    'A\. Customer' 'B\. Customer' '\+49 151' '0000001' '0000002'   # customer names and phones
    # OTP codes; 4812 also turns up as a group of a random UUID (sos=a8f78560-f99d-4812-...), which is no code
    '(^|[^-0-9a-fA-F])4812([^-0-9a-fA-F]|$)' '"otp"' '"value":"[0-9]{4}"'
    'gate code' 'rang twice' 'leave it at the door' 'new entrance' 'door code' 'Ring twice'  # texts from customers and drivers
)
status=0
for pattern in "${patterns[@]}"; do
    if grep -E -n -H -- "$pattern" "${files[@]}" | head -5 | grep .; then
        echo "check-log-privacy: customer data ($pattern) in a daemon log" >&2
        status=1
    fi
done
lines=$(cat "${files[@]}" | wc -l)
((status == 0)) && echo "check-log-privacy: ${#files[@]} daemon logs, $lines lines, no customer data"
exit $status
