// The `tilecache` executable: everything is in the TileCacheCLI library.
import Foundation
import TileCacheCLI

exit(await TileCacheCommand.run(arguments: Array(CommandLine.arguments.dropFirst())))
