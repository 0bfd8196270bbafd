extension Array where Element: AnyObject {
    /// Element `index`, referred to without a retain of its own: for a call on it through
    /// `_withUnsafeGuaranteedRef`, with the array read before the call and not during it.
    ///
    /// For an array that no one changes while the element is used, which then keeps the element
    /// alive: read from a class's `var` (a type's key runs, `TypeIndex`), the element, or the
    /// array when the element was borrowed from it, was retained and released around every call
    /// the compiler could not see through, since such a call might have replaced it. `index`
    /// must be within the array.
    @inline(__always)
    func unretainedElement(_ index: Int) -> Unmanaged<Element> {
        Unmanaged.passUnretained(self[index])
    }
}
