extension RandomAccessCollection {
    /// The first index whose element satisfies `belongsInSecondPartition`, in a collection where every element
    /// that does comes after every one that does not (a sorted collection and a bound): a binary search, as
    /// swift-algorithms names it (not a dependency for one function).
    func partitioningIndex(where belongsInSecondPartition: (Element) -> Bool) -> Index {
        var low = startIndex, count = self.count
        while count > 0 {
            let half = count / 2
            let middle = index(low, offsetBy: half)
            if belongsInSecondPartition(self[middle]) {
                count = half
            } else {
                low = index(after: middle)
                count -= half + 1
            }
        }
        return low
    }
}
