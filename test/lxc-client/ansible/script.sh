#!/bin/sh
echo "script ran as $(id -un) in $(pwd)"
printf "%s\n" "$@"
