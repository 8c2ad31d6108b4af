# bash completion for flowctl(1)                                 -*- shell-script -*-
#
# Commands and options come from this file; flow ids, session ids, the fields
# of a session's current step and their option ids come from the daemon
# through `flowctl __complete`, on the bus the command line names
# (--system, --user or --address).

_flowctl_commands="flows start sessions close show set continue back goto review answers submit cancel
    watch run resume plugins status reload check help"
_flowctl_session_commands="close show set continue back goto review answers submit cancel watch resume"
_flowctl_locales="en es fr de it pt-BR ja ko zh-Hans zh-Hant"

# Candidates from the daemon on the chosen bus; nothing when it cannot be asked.
_flowctl_ask() {
    "${_flowctl_bin:-flowctl}" "${_flowctl_bus[@]}" __complete "$@" 2>/dev/null
}

_flowctl() {
    local cur prev words cword
    if declare -F _init_completion >/dev/null; then
        _init_completion -n =: || return
    else
        # Without bash-completion's library: bash has cut the line at every
        # character of COMP_WORDBREAKS, ':' and '=' included, so a bus
        # address is several words. The words are taken again from the line
        # up to the cursor, cut at white space only (an address has none).
        local line=${COMP_LINE:0:COMP_POINT}
        read -r -a words <<<"$line"
        [[ -z $line || $line == *[[:space:]] ]] && words+=("")
        cword=$((${#words[@]} - 1))
        cur=${words[cword]}
        prev=${words[cword-1]:-}
    fi
    _flowctl_bin=${words[0]}

    # The bus options given so far, and the command and its arguments.
    _flowctl_bus=()
    local i word command="" args=()
    for ((i = 1; i < cword; i++)); do
        word=${words[i]}
        case $word in
            # sessions --user NAME is its owner filter; --user alone, the bus.
            --user) if [[ $command == sessions && $((i + 1)) -lt $cword && ${words[i+1]} != -* ]]; then ((i++)); else _flowctl_bus+=("$word"); fi ;;
            --system|--session) _flowctl_bus+=("$word") ;;
            --address) _flowctl_bus+=(--address "${words[i+1]}"); ((i++)) ;;
            --address=*) _flowctl_bus+=("$word") ;;
            --color|--locale|--answers|--plugin-dir|--flow|--state|--older-than) ((i++)) ;;
            -*) ;;
            *) if [[ -z $command ]]; then command=$word; else args+=("$word"); fi ;;
        esac
    done

    case $prev in
        --address) return ;;
        --color) COMPREPLY=($(compgen -W "auto always never" -- "$cur")); return ;;
        --locale) COMPREPLY=($(compgen -W "$_flowctl_locales" -- "$cur")); return ;;
        --flow) [[ $command == sessions ]] && { COMPREPLY=($(compgen -W "$(_flowctl_ask flows)" -- "$cur")); return; } ;;
        --state) COMPREPLY=($(compgen -W "editing review submitting submitted failed" -- "$cur")); return ;;
        --older-than) COMPREPLY=($(compgen -W "30m 1h 2h 1d 7d 30d" -- "$cur")); return ;;
        --user)
            # After sessions, a user to filter on (or an option: then it is the bus flag).
            if [[ $command == sessions && $cur != -* ]]; then COMPREPLY=($(compgen -u -- "$cur")); return; fi
            ;;
        --plugin-dir)
            if declare -F _filedir >/dev/null; then _filedir -d; else COMPREPLY=($(compgen -d -- "$cur")); fi
            return ;;
        --answers)
            if declare -F _filedir >/dev/null; then _filedir json; else COMPREPLY=($(compgen -f -- "$cur")); fi
            return
            ;;
    esac

    if [[ $cur == -* ]]; then
        local options="--system --user --address --json --color --no-ask-password --help --version"
        case $command in
            start) options+=" --locale" ;;
            run) options+=" --locale --answers --submit --dry-run" ;;
            flows) options+=" --quiet -q" ;;
            sessions) options+=" --quiet -q --flow --state --older-than" ;;
            check) options+=" --plugin-dir" ;;
        esac
        COMPREPLY=($(compgen -W "$options" -- "$cur"))
        return
    fi

    if [[ -z $command ]]; then
        COMPREPLY=($(compgen -W "$_flowctl_commands" -- "$cur"))
        return
    fi

    case $command in
        start|run)
            [[ ${#args[@]} -eq 0 ]] && COMPREPLY=($(compgen -W "$(_flowctl_ask flows)" -- "$cur"))
            ;;
        check)
            if declare -F _filedir >/dev/null; then _filedir json; else COMPREPLY=($(compgen -f -- "$cur")); fi
            ;;
        help)
            [[ ${#args[@]} -eq 0 ]] && COMPREPLY=($(compgen -W "$_flowctl_commands" -- "$cur"))
            ;;
        *)
            [[ " $_flowctl_session_commands " == *" $command "* ]] || return
            if [[ ${#args[@]} -eq 0 ]]; then
                COMPREPLY=($(compgen -W "$(_flowctl_ask sessions)" -- "$cur"))
            elif [[ $command == goto && ${#args[@]} -eq 1 ]]; then
                COMPREPLY=($(compgen -W "$(_flowctl_ask steps "${args[0]}")" -- "$cur"))
            elif [[ $command == set ]]; then
                if [[ $cur == *=* ]]; then
                    # FIELD=VALUE: the field's option ids (or yes/no); lists after a comma.
                    local field=${cur%%=*} value=${cur#*=} head=""
                    [[ $value == *,* ]] && head=${value%,*},
                    local candidates
                    candidates=$(_flowctl_ask values "${args[0]}" "$field")
                    COMPREPLY=($(compgen -P "$field=$head" -W "$candidates" -- "${value##*,}"))
                    # bash replaces only what follows the last ':' or '=' (its
                    # word breaks), so the candidates start there too.
                    local kept=${cur%"${cur##*[=:]}"}
                    COMPREPLY=("${COMPREPLY[@]#"$kept"}")
                else
                    compopt -o nospace 2>/dev/null
                    COMPREPLY=($(compgen -W "$(_flowctl_ask fields "${args[0]}")" -- "$cur"))
                fi
            fi
            ;;
    esac
}

complete -F _flowctl flowctl
