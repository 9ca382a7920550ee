import ArgumentParser

/// `--config FILE` of `serve`, `prefetch` and `validate`. `ConfigurationSources` reads the file before the command line
/// is parsed and turns its values into options; this declaration puts it in `--help` and the man pages.
struct ConfigFileOption: ParsableArguments {
    @Option(help: ArgumentHelp("A YAML file of option values: 'option: value' at the top level or under the command's name (default: $TILECACHE_CONFIG). Typed options win over the environment (TILECACHE_<OPTION>), which wins over the file; see tilecache config --show.",
                               valueName: "file"))
    var config: String?
}
