# Read by bash (BASH_ENV) before it turns restricted: close what the sandbox leaves open.
# kill could reach any process of the machine's user (scripts get a `kill` that signals only
# this host's processes, in bin-script/); fc/history could write files; pushd/popd change
# directory like cd. Whether this command is walled in is not the shell's to change.
enable -n kill fc history pushd popd dirs
readonly SCOUT_SIM_CONFINED SCOUT_SIM_UNCONFINED
if shopt -q restricted_shell; then
    # Restricted bash refuses every output redirection, even to /dev/null. Keep the common
    # "discard this" forms working by pointing them at a descriptor opened here.
    exec 3>/dev/null
    if [ -n "${SIM_CMD+x}" ]; then
        SIM_CMD=${SIM_CMD//'&>/dev/null'/'>&3 2>&3'}
        SIM_CMD=${SIM_CMD//'&> /dev/null'/'>&3 2>&3'}
        SIM_CMD=${SIM_CMD//'>>/dev/null'/'>&3'}
        SIM_CMD=${SIM_CMD//'>/dev/null'/'>&3'}
        SIM_CMD=${SIM_CMD//'> /dev/null'/'>&3'}
    fi
else
    # A script inside the host's wall (sim/fakehost/confinement.py): redirections work, beneath
    # the host's home and tmp folders only. Without `enable`, the disabled builtins stay so.
    enable -n enable
fi
