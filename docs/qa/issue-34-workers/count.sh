#!/bin/bash
d=$1
echo "records: $(ls $d/out/results/*.json 2>/dev/null | wc -l)  failed: $(grep -l '"error"' $d/out/results/*.json 2>/dev/null | xargs -r grep -L '"error": null' | wc -l)"
echo "build lines per entry (across all job logs):"
cat $d/out/logs/*.log 2>/dev/null | grep -v 'waiting for' | grep -o 'building the [A-Za-z ]* [^ :]*\|packed the Track sample [^ ]*' | sed "s#$d/##" | sort | uniq -c
echo "waits: $(cat $d/out/logs/*.log 2>/dev/null | grep -c 'waiting for another process')"
echo "errors in logs: $(cat $d/out/logs/*.log 2>/dev/null | grep -c 'FileNotFoundError')"
