; loop_sum.ll: out[i] = sum over k < len of a[i*len + k] (a runtime-length loop per work-item), and an
; integer variant with shifts, wrap-around and a select.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()

define amdgpu_kernel void @loop_sum(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias readonly %a, i32 %len) #0 {
entry:
  %lid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = shl i32 %gid, 5
  %i = add nuw nsw i32 %base, %lid
  %row = mul i32 %i, %len
  %has = icmp sgt i32 %len, 0
  br i1 %has, label %loop, label %done
loop:
  %k = phi i32 [ 0, %entry ], [ %k1, %loop ]
  %acc = phi float [ 0.0, %entry ], [ %acc1, %loop ]
  %j = add i32 %row, %k
  %j64 = sext i32 %j to i64
  %p = getelementptr inbounds float, ptr addrspace(1) %a, i64 %j64
  %v = load float, ptr addrspace(1) %p, align 4
  %acc1 = fadd float %acc, %v
  %k1 = add nuw nsw i32 %k, 1
  %more = icmp slt i32 %k1, %len
  br i1 %more, label %loop, label %done
done:
  %r = phi float [ 0.0, %entry ], [ %acc1, %loop ]
  %i64 = zext i32 %i to i64
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %i64
  store float %r, ptr addrspace(1) %po, align 4
  ret void
}

define amdgpu_kernel void @int_mix(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias readonly %a, i32 %s) #0 {
entry:
  %lid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = shl i32 %gid, 5
  %i = add nuw nsw i32 %base, %lid
  %i64 = zext i32 %i to i64
  %p = getelementptr inbounds i32, ptr addrspace(1) %a, i64 %i64
  %v = load i32, ptr addrspace(1) %p, align 4
  %sh = and i32 %s, 31
  %l = shl i32 %v, %sh
  %r = lshr i32 %v, %sh
  %ar = ashr i32 %v, %sh
  %m = mul i32 %v, -1640531535
  %x = xor i32 %l, %r
  %y = add i32 %x, %m
  %neg = icmp slt i32 %v, 0
  %sel = select i1 %neg, i32 %ar, i32 %y
  %hi = call i32 @llvm.umax.i32(i32 %sel, i32 %v)
  %mn = call i32 @llvm.smin.i32(i32 %hi, i32 %ar)
  %z = sub i32 %hi, %mn
  %po = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %i64
  store i32 %z, ptr addrspace(1) %po, align 4
  ret void
}
declare i32 @llvm.umax.i32(i32, i32)
declare i32 @llvm.smin.i32(i32, i32)

attributes #0 = { nounwind "amdgpu-flat-work-group-size"="32,32" }
