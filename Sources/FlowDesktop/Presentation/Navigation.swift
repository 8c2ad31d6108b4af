import Adwaita

/// Which way the window moves between two screens, and how it animates.
package enum Navigation {
    /// Where a screen sits along the flow: the start page before everything,
    /// steps by their index, Review by its own, the outcome pages last.
    package static func position(of screen: Screen) -> Int {
        switch screen {
        case .start, .notice: return 0
        case .step(let s): return s.page.index
        case .review(let r, _): return r.page.index
        case .submitting: return Int.max - 1
        case .success: return Int.max
        }
    }

    /// The direction of a change from `old` to `new`.
    package enum Direction: Sendable, Equatable {
        /// Further along: the new screen comes in from the end side.
        case forward
        /// Back along the path (Back, Edit from Review): it comes in from the start side.
        case back
        /// The same screen with new content: updated in place, no animation.
        case same
    }

    package static func direction(from old: Screen?, to new: Screen) -> Direction {
        guard let old else { return .forward }
        if identity(of: old) == identity(of: new) { return .same }
        // The same index is another step (a branch changed the path): forward too.
        return position(of: new) < position(of: old) ? .back : .forward
    }

    /// Slides from the side the screen comes from; a crossfade when the
    /// desktop asks for reduced motion (`gtk-enable-animations` off).
    package static func transition(_ direction: Direction, animationsEnabled: Bool) -> StackTransition {
        switch direction {
        case .same: return .none
        case .forward: return animationsEnabled ? .slideForward : .crossfade
        case .back: return animationsEnabled ? .slideBack : .crossfade
        }
    }

    /// What makes two screens "the same page" (updated in place rather than replaced).
    package static func identity(of screen: Screen) -> String {
        switch screen {
        case .start: return "start"
        case .notice: return "notice"
        case .step(let s): return "step:" + s.page.id
        case .review: return "review"
        case .submitting: return "submitting"
        case .success: return "success"
        }
    }
}
